// The cost of capture's counting pass-through (an API capture does not model): N calls
// of cudaGraphicsMapResources against a stand-in that defines it. Run under callgrind
// with and without LD_PRELOAD=libhrr_capture.so; the difference in instructions per
// call is the pass-through's fast path. Build:
//   cc -shared -fPIC -o libcudart.so.13 rt.c   (rt.c: int cudaGraphicsMapResources(int c, void** r, void* s) { return c - 1; })
//   cc -O2 -o unseen_loop unseen_loop.c -L. -l:libcudart.so.13 -Wl,-rpath,.
#include <stdio.h>
#include <stdlib.h>

int cudaGraphicsMapResources(int count, void** resources, void* stream);

int main(int argc, char** argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    long bad = 0;
    for (long i = 0; i < n; ++i) bad += cudaGraphicsMapResources(1, 0, 0);
    printf("%ld calls, %ld failed\n", n, bad);
    return bad != 0;
}
