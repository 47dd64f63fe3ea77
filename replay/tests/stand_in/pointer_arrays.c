/* Device memory holding device pointers (cuBLAS's batched GEMMs take their matrices this
 * way), against the stand-in runtime (standin/): three buffers, an array of their
 * addresses uploaded into a fourth, the array read back, and each buffer written through
 * the address read back. Exit 0: right; 1: a wrong result; 2: a call failed (printed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cudaMalloc(void **, size_t);
int cudaMemcpyAsync(void *, const void *, size_t, int, void *);
int cudaStreamSynchronize(void *);

#define CHECK(call) do { int e_ = (call); if (e_) { printf("%s failed: %d\n", #call, e_); exit(2); } } while (0)
#define H2D 1
#define D2H 2

int main(void) {
    /* Something that is no pointer beside them: a small integer and a float. */
    struct { void *buf[3]; unsigned long long count; double scale; } table, back;
    for (int i = 0; i < 3; i++) CHECK(cudaMalloc(&table.buf[i], 64));
    table.count = 3;
    table.scale = 0.5;
    void *dtable = 0;
    CHECK(cudaMalloc(&dtable, sizeof table));
    CHECK(cudaMemcpyAsync(dtable, &table, sizeof table, H2D, 0));
    memset(&back, 0, sizeof back);
    CHECK(cudaMemcpyAsync(&back, dtable, sizeof back, D2H, 0));
    CHECK(cudaStreamSynchronize(0)); /* an asynchronous copy's result: after the wait */
    if (memcmp(&back, &table, sizeof table)) return 1;
    unsigned char data[64], out[64];
    for (int i = 0; i < 3; i++) {
        memset(data, 'a' + i, sizeof data);
        CHECK(cudaMemcpyAsync(back.buf[i], data, sizeof data, H2D, 0));
    }
    for (int i = 0; i < 3; i++) {
        CHECK(cudaMemcpyAsync(out, table.buf[i], sizeof out, D2H, 0));
        CHECK(cudaStreamSynchronize(0));
        if (out[0] != 'a' + i || out[63] != 'a' + i) return 1;
    }
    return 0;
}
