// Calls capture does not model, through the stand-in runtime: a copy round trip with an
// unmodelled call between, an exempt one, the argument and return-value checks of the
// pass-through, a call whose real function is missing, and threads racing to make the
// first call of an API. Prints "name value" lines; exits 1 if any value is wrong.
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

int cudaMalloc(void** p, size_t n);
int cudaMemcpy(void* dst, const void* src, size_t n, int kind);
int cudaGraphicsMapResources(int count, void** resources, void* stream);
int cudaGraphicsUnmapResources(int count, void** resources, void* stream);
const char* cudaGetErrorString(int e);
long cuGraphicsSubResourceGetMappedArray(long a, const char* b, int c, long d, long e, long f, long g, long h);
double cuCoredumpSetAttributeGlobal(double a, int b, double c, const double* d, double e, double f,
                                    double g, double h, double i, double j, double k);

enum { THREADS = 8, CALLS = 1000 };
static pthread_barrier_t start;
static int bad;

static void* racer(void* arg) {
    (void)arg;
    pthread_barrier_wait(&start);
    for (int i = 0; i < CALLS; ++i)
        if (cudaGraphicsUnmapResources(2, 0, 0) != 0) __atomic_add_fetch(&bad, 1, __ATOMIC_RELAXED);
    return 0;
}

int main(void) {
    int fails = 0;
    char host[64], back[64];
    for (int i = 0; i < 64; ++i) host[i] = (char)i;
    void* dev = 0;
    fails += cudaMalloc(&dev, 64) != 0;
    fails += cudaMemcpy(dev, host, 64, 1) != 0;
    fails += cudaMemcpy(back, dev, 64, 2) != 0;
    int mapped = cudaGraphicsMapResources(1, 0, 0);
    printf("map %d\n", mapped);
    fails += mapped != 0;
    fails += cudaMemcpy(back, dev, 64, 2) != 0;
    fails += memcmp(host, back, 64) != 0;
    fails += strcmp(cudaGetErrorString(0), "no error") != 0;
    // First call through the first-call path, then through the resolved slot.
    for (int round = 0; round < 2; ++round) {
        long l = cuGraphicsSubResourceGetMappedArray(1, "\x02", 3, 4, 5, 6, 7, 8);
        double d4 = 4.5;
        double d = cuCoredumpSetAttributeGlobal(1.5, 2, 3.5, &d4, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5);
        printf("ints %ld\ndoubles %.1f\n", l, d);
        fails += l != 1 + 2 * 2 + 3 * 3 + 4 * 4 + 5 * 5 + 6 * 6 + 7 * 7 + 8 * 8;
        fails += d != 1.5 + 2 * 2 + 3.5 * 3 + 4.5 * 4 + 5.5 * 5 + 6.5 * 6 + 7.5 * 7 + 8.5 * 8 +
                          9.5 * 9 + 10.5 * 10 + 11.5 * 11;
    }
    // A surface symbol the stand-in lacks: capture's pass-through answers for it.
    int (*missing)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "cuGraphicsMapResources");
    int m = missing ? missing() : -1;
    printf("missing %d\n", m);
    pthread_t t[THREADS];
    pthread_barrier_init(&start, 0, THREADS);
    for (int i = 0; i < THREADS; ++i) pthread_create(&t[i], 0, racer, 0);
    for (int i = 0; i < THREADS; ++i) pthread_join(t[i], 0);
    printf("racers_bad %d\n", bad);
    fails += bad != 0;
    printf("fails %d\n", fails);
    return fails != 0;
}
