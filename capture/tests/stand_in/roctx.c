/* A stand-in libroctx64 (tests/range.rs): a push returns its nesting depth, a pop the
 * depth it leaves, a start a fresh id; the program prints them, so a test sees that
 * capture forwarded each call and returned roctx's own answer. */
#include <stdint.h>

static __thread int depth;
static uint64_t next_id = 100;

int roctxRangePushA(const char* message) {
    (void)message;
    return depth++;
}

int roctxRangePop(void) { return depth > 0 ? --depth : -1; }

uint64_t roctxRangeStartA(const char* message) {
    (void)message;
    return next_id++;
}

void roctxRangeStop(uint64_t id) { (void)id; }
