// Programs for capture's fault tests, against the stand-in runtime (standin/). The
// first argument picks one:
//   steady THREADS  THREADS threads (the main one included) launch a kernel forever;
//                   after each launch returns, the thread writes {tid, count, time} (16
//                   bytes, one write(2)) to stdout, so a killed run still reports what
//                   it issued.
//   first           one runtime call, then "called" on stdout, then sleeps.
//   chdir DIR       changes to DIR, then copies to the device and exits.
//   fork            registers a kernel, forks; parent and child each allocate, launch
//                   it and copy the result back (cases/fork_child's shape).
//   forkexit        as fork, but the child leaves with _exit (atexit handlers skipped).
//   forkexec        one runtime call, then forks; the child execs this program "plain".
//   recexec         records ("plain"), then execs this program "plain" (same pid).
//   plain           a few calls (malloc, copy, free).
//   forkstorm T F   T threads make calls without pause (allocations, copies, an async
//                   copy back and its synchronisation, launches) while the main thread
//                   forks F children, one after the other; each child makes calls (in
//                   turn: exits, starts a thread that makes them, leaves with _exit). A
//                   child not done within 20 s is killed and counted hung; prints
//                   "forks=F hung=H failed=X".
//   launches N      N launches (events only, no blobs); prints how many returned.
//   blobs N         N host-to-device copies of 64 KiB, each distinct (a blob each);
//                   prints how many returned.
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fatbin.h"

typedef struct { unsigned x, y, z; } dim3;
int cudaGetDeviceCount(int*);
int cudaMalloc(void**, size_t);
int cudaFree(void*);
int cudaMemcpy(void*, const void*, size_t, int);
int cudaMemcpyAsync(void*, const void*, size_t, int, void*);
int cudaStreamSynchronize(void*);
void** __cudaRegisterFatBinary(void*);
void __cudaRegisterFatBinaryEnd(void**);
void __cudaRegisterFunction(void**, const char*, char*, const char*, int, void*, void*, void*, void*, int*);
int cudaLaunchKernel(const void*, dim3, dim3, void**, size_t, void*);

enum { H2D = 1, D2H = 2 };
static void stub(void) {}
// A kernel of two 8-byte parameters.
HRR_FATBIN(fatbin, ".version 8.0\n.target sm_90\n.visible .entry kernel(.param .u64 a, .param .u64 b)\n{\n ret;\n}\n");
static void* dev;

static void register_kernel(void) {
    void** h = __cudaRegisterFatBinary(&fatbin_wrapper);
    __cudaRegisterFunction(h, (const char*)stub, "kernel", "kernel", -1, 0, 0, 0, 0, 0);
    __cudaRegisterFatBinaryEnd(h);
}

static int launch(void) {
    void* args[] = {&dev, &dev};
    dim3 g = {1, 1, 1}, b = {32, 1, 1};
    return cudaLaunchKernel((const void*)stub, g, b, args, 0, 0);
}

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void* steady(void* unused) {
    (void)unused;
    uint32_t tid = (uint32_t)syscall(SYS_gettid);
    for (uint32_t n = 1;; ++n) {
        // A short pause every 64 launches: steady, without starving the flusher of the
        // machine's cores (the test is about capture, not the scheduler).
        if (n % 64 == 0) {
            struct timespec pause = {0, 50000};
            nanosleep(&pause, 0);
        }
        launch();
        struct { uint32_t tid, count; uint64_t t; } r = {tid, n, now_ns()};
        if (write(1, &r, sizeof r) != sizeof r) _exit(3);
    }
    return 0;
}

static int plain(void) {
    char host[256], back[256];
    for (int i = 0; i < 256; ++i) host[i] = (char)i;
    void* d = 0;
    int rc = cudaMalloc(&d, sizeof host);
    rc |= cudaMemcpy(d, host, sizeof host, H2D);
    rc |= cudaMemcpy(back, d, sizeof back, D2H);
    rc |= cudaFree(d);
    return rc != 0 || memcmp(host, back, sizeof host) != 0;
}

static volatile int storm_stop;

static void* storm_thread(void* unused) {
    (void)unused;
    char host[256], back[256];
    memset(host, 0x5a, sizeof host);
    for (unsigned n = 1; !storm_stop; ++n) {
        void* d = 0;
        if (cudaMalloc(&d, sizeof host) != 0) continue;
        cudaMemcpy(d, host, sizeof host, H2D);
        cudaMemcpyAsync(back, d, sizeof back, D2H, 0);
        cudaStreamSynchronize(0);
        launch();
        cudaFree(d);
        if (n % 16 == 0) {
            struct timespec pause = {0, 20000};
            nanosleep(&pause, 0);
        }
    }
    return 0;
}

static void* plain_thread(void* rc) {
    *(int*)rc = plain();
    return 0;
}

static int fork_storm(int threads, int forks) {
    register_kernel();
    cudaMalloc(&dev, 64);
    pthread_t t[64];
    if (threads > 64) threads = 64;
    for (int i = 0; i < threads; ++i) pthread_create(&t[i], 0, storm_thread, 0);
    int hung = 0, failed = 0;
    for (int i = 0; i < forks; ++i) {
        pid_t child = fork();
        if (child < 0) { ++failed; continue; }
        if (child == 0) {
            int rc = 0;
            switch (i % 3) {
            case 0: exit(plain());
            case 1: {
                pthread_t c;
                if (pthread_create(&c, 0, plain_thread, &rc) != 0) exit(6);
                pthread_join(c, 0);
                exit(rc);
            }
            default: _exit(plain());
            }
        }
        uint64_t deadline = now_ns() + 20000000000ull;
        int status = 0;
        pid_t got;
        while ((got = waitpid(child, &status, WNOHANG)) == 0 && now_ns() < deadline) {
            struct timespec pause = {0, 1000000};
            nanosleep(&pause, 0);
        }
        if (got == 0) {
            kill(child, SIGKILL);
            waitpid(child, &status, 0);
            fprintf(stderr, "fork %d: child %d hung\n", i, (int)child);
            ++hung;
        } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "fork %d: child %d ended with status %#x\n", i, (int)child, status);
            ++failed;
        }
    }
    storm_stop = 1;
    for (int i = 0; i < threads; ++i) pthread_join(t[i], 0);
    printf("forks=%d hung=%d failed=%d\n", forks, hung, failed);
    return hung != 0 || failed != 0;
}

static int child_then_parent_launch(int child_uses_underscore_exit) {
    register_kernel();
    pid_t child = fork();
    if (child < 0) return 2;
    int rc = cudaMalloc(&dev, 64);
    rc |= launch();
    char back[64];
    rc |= cudaMemcpy(back, dev, sizeof back, D2H);
    rc |= cudaFree(dev);
    if (child == 0) {
        if (child_uses_underscore_exit) _exit(rc != 0);
        exit(rc != 0);
    }
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 4;
    return rc != 0;
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "steady")) {
        int threads = argc > 2 ? atoi(argv[2]) : 4;
        register_kernel();
        cudaMalloc(&dev, 64);
        for (int i = 1; i < threads; ++i) {
            pthread_t t;
            pthread_create(&t, 0, steady, 0);
        }
        steady(0);
    } else if (!strcmp(mode, "first")) {
        int n = 0;
        cudaGetDeviceCount(&n);
        printf("called\n");
        fflush(stdout);
        for (;;) pause();
    } else if (!strcmp(mode, "chdir") && argc > 2) {
        if (chdir(argv[2]) != 0) return 2;
        return plain();
    } else if (!strcmp(mode, "plain")) {
        return plain();
    } else if (!strcmp(mode, "fault_abort")) {
        /* A kernel faults; the program reports the synchronisation's error and dies by
           a signal right after, as an error-check macro that aborts does. */
        register_kernel();
        cudaMalloc(&dev, 64);
        launch();
        int r = cudaDeviceSynchronize();
        printf("synchronize %d\n", r);
        fflush(stdout);
        abort();
    } else if (!strcmp(mode, "fork")) {
        return child_then_parent_launch(0);
    } else if (!strcmp(mode, "forkexit")) {
        return child_then_parent_launch(1);
    } else if (!strcmp(mode, "recexec")) {
        if (plain() != 0) return 2;
        fflush(stdout);
        execl("/proc/self/exe", argv[0], "plain", (char*)0);
        return 3;
    } else if (!strcmp(mode, "forkexec")) {
        int n = 0;
        cudaGetDeviceCount(&n);
        fflush(stdout);
        pid_t child = fork();
        if (child < 0) return 2;
        if (child == 0) {
            execl("/proc/self/exe", argv[0], "plain", (char*)0);
            _exit(5);
        }
        int status = 0;
        if (waitpid(child, &status, 0) != child || !WIFEXITED(status)) return 4;
        printf("child=%d status=%d\n", (int)child, WEXITSTATUS(status));
        return WEXITSTATUS(status);
    } else if (!strcmp(mode, "forkstorm") && argc > 3) {
        return fork_storm(atoi(argv[2]), atoi(argv[3]));
    } else if (!strcmp(mode, "launches") && argc > 2) {
        long n = atol(argv[2]), done = 0;
        register_kernel();
        cudaMalloc(&dev, 64);
        for (long i = 0; i < n; ++i) done += launch() == 0;
        printf("launches=%ld\n", done);
        return 0;
    } else if (!strcmp(mode, "blobs") && argc > 2) {
        long n = atol(argv[2]);
        enum { SIZE = 64 << 10 };
        static uint64_t host[SIZE / 8];
        void* d = 0;
        if (cudaMalloc(&d, SIZE) != 0) return 2;
        long done = 0;
        for (long i = 0; i < n; ++i) {
            for (size_t w = 0; w < SIZE / 8; ++w) host[w] = (uint64_t)i * 0x9E3779B97F4A7C15ull + w;
            if (cudaMemcpy(d, host, SIZE, H2D) == 0) ++done;
        }
        cudaFree(d);
        printf("copies=%ld\n", done);
        return 0;
    }
    fprintf(stderr, "usage: faults steady THREADS | first | chdir DIR | plain | fork | forkexit | forkexec | recexec | forkstorm T F | launches N | blobs N\n");
    return 2;
}
