/* What the stand-in device does on request, through environment variables read when it is
 * needed (tests of capture, replay and the harness set them; unset, none happens):
 *  - HRR_STAND_IN_FAULT=CODE: the program's first device synchronisation fails with CODE,
 *    a sticky error (every call returns it from then on), as after a kernel's illegal
 *    address. (A kernel named `..._hrr_fault_CODE` faults the same way when it runs.)
 *  - HRR_STAND_IN_HANG=SECONDS: a device synchronisation waits that long (a kernel that
 *    never ends).
 *  - HRR_STAND_IN_VARY="START:LEN": bytes [START, START+LEN) of the first row of every
 *    device-to-host copy's result are XORed with a nonzero value that changes from one
 *    such copy to the next (and from process to process), as a float atomic sum's low
 *    bytes vary from run to run.
 *  - HRR_STAND_IN_SKEW=OFFSET: byte OFFSET of every device-to-host result XORed with 0x5a,
 *    alike in every run (a deterministic regression).
 *  - HRR_STAND_IN_OOB_LOG=FILE: every device range refused for running past its allocation
 *    (or lying in a freed one) appends a line `ADDRESS +BYTES` there, so a fuzzer counts
 *    the out-of-bounds calls that reached the runtime.
 *  - HRR_STAND_IN_ABORT_ON_DOUBLE_FREE=1: freeing an already freed allocation aborts the
 *    process (as glibc does on a double free) instead of failing with invalid value. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core_internal.h"

static int sync_on_request(void) {
    const char* hang = getenv("HRR_STAND_IN_HANG");
    if (hang) sleep((unsigned)atoi(hang));
    const char* f = getenv("HRR_STAND_IN_FAULT");
    if (f && atoi(f) && !si_sticky) si_sticky = atoi(f);
    return si_sticky;
}

static void out_of_bounds(const void* p, size_t n) {
    const char* log = getenv("HRR_STAND_IN_OOB_LOG");
    FILE* f = log && *log ? fopen(log, "a") : 0;
    if (!f) return;
    fprintf(f, "%p +%zu\n", p, n);
    fclose(f);
}

static void double_free(const void* p) {
    (void)p;
    if (getenv("HRR_STAND_IN_ABORT_ON_DOUBLE_FREE")) abort();
}

/* A device-to-host copy's result as the requests make it (o has just run). */
static void result_on_request(struct op* o) {
    static unsigned count;
    const char *v = getenv("HRR_STAND_IN_VARY"), *k = getenv("HRR_STAND_IN_SKEW");
    enum si_mem kind;
    size_t left;
    if ((!v && !k) || !si_lookup(o->src, &kind, &left) || kind == SI_PINNED || kind == SI_REGISTERED ||
        (si_lookup(o->dst, &kind, &left) && (kind == SI_DEVICE || kind == SI_SYMBOL)))
        return;
    if (v) {
        char* colon = strchr(v, ':');
        size_t start = strtoul(v, 0, 10), len = colon ? strtoul(colon + 1, 0, 10) : 0;
        /* 1..255: consecutive results never XOR alike; the process id offsets the cycle. */
        unsigned x = ((unsigned)getpid() * 0x9e3779b1u >> 16) + ++count;
        char b = (char)(x % 255 + 1);
        for (size_t i = start; i < start + len && i < o->width; i++) o->dst[i] ^= b;
    }
    if (k) {
        size_t at = strtoul(k, 0, 10);
        if (at < o->width) o->dst[at] ^= 0x5a;
    }
}

/* Installed when the library loads: core.c reaches this file only through them, as it
 * reaches graph.c ($HRR_STAND_IN_DEVICE_MEMORY, the device's memory, is core.c's own). */
static const struct si_request_hooks hooks = {sync_on_request, out_of_bounds, double_free, result_on_request};
__attribute__((constructor)) static void install(void) { si_set_request_hooks(&hooks); }
