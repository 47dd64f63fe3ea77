/* graph_capture in C against the stand-in runtime (standin/): two streams joined
 * by events captured in global mode (H2D, D2D on the forked stream, D2H), while a second
 * thread copies on a stream of its own; one instantiation launched three times with new
 * input, each launch's output checked. Exit 0: right; 1: a wrong result; 2: a call
 * failed (printed). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

int cudaMalloc(void **, size_t);
int cudaHostAlloc(void **, size_t, unsigned);
int cudaStreamCreateWithFlags(void **, unsigned);
int cudaEventCreateWithFlags(void **, unsigned);
int cudaMemcpyAsync(void *, const void *, size_t, int, void *);
int cudaStreamSynchronize(void *);
int cudaEventRecord(void *, void *);
int cudaStreamWaitEvent(void *, void *, unsigned);
int cudaStreamBeginCapture(void *, int);
int cudaStreamEndCapture(void *, void **);
int cudaStreamIsCapturing(void *, int *);
int cudaGraphInstantiateWithFlags(void **, void *, unsigned long long);
int cudaGraphLaunch(void *, void *);
int cudaGraphExecDestroy(void *);
int cudaGraphDestroy(void *);

#define CHECK(call) do { int e_ = (call); if (e_) { printf("%s failed: %d\n", #call, e_); exit(2); } } while (0)
#define N 256

static volatile int phase;
static unsigned char *side_host, *side_dev;
static void *side;

static void *other(void *arg) {
    (void)arg;
    while (phase < 1) {}
    CHECK(cudaMemcpyAsync(side_host, side_dev, N, 2, side));
    phase = 2;
    while (phase < 3) {}
    CHECK(cudaStreamSynchronize(side));
    for (int i = 0; i < N; i++) if (side_host[i] != (unsigned char)(i ^ 0x5a)) exit(1);
    return 0;
}

int main(void) {
    unsigned char *h_in, *h_out, *d_in, *d_out;
    void *s1, *s2, *fork_ev, *join_ev, *graph, *exec;
    CHECK(cudaHostAlloc((void **)&h_in, N, 0));
    CHECK(cudaHostAlloc((void **)&h_out, N, 0));
    CHECK(cudaHostAlloc((void **)&side_host, N, 0));
    CHECK(cudaMalloc((void **)&d_in, N));
    CHECK(cudaMalloc((void **)&d_out, N));
    CHECK(cudaMalloc((void **)&side_dev, N));
    for (int i = 0; i < N; i++) side_host[i] = (unsigned char)(i ^ 0x5a);
    CHECK(cudaStreamCreateWithFlags(&s1, 1));
    CHECK(cudaStreamCreateWithFlags(&s2, 1));
    CHECK(cudaStreamCreateWithFlags(&side, 1));
    CHECK(cudaEventCreateWithFlags(&fork_ev, 2));
    CHECK(cudaEventCreateWithFlags(&join_ev, 2));
    CHECK(cudaMemcpyAsync(side_dev, side_host, N, 1, side));
    CHECK(cudaStreamSynchronize(side));
    pthread_t t;
    pthread_create(&t, 0, other, 0);

    CHECK(cudaStreamBeginCapture(s1, 0));
    CHECK(cudaMemcpyAsync(d_in, h_in, N, 1, s1));
    CHECK(cudaEventRecord(fork_ev, s1));
    CHECK(cudaStreamWaitEvent(s2, fork_ev, 0));
    int st = 0;
    CHECK(cudaStreamIsCapturing(s2, &st));
    if (st != 1) { printf("forked stream not capturing: %d\n", st); return 1; }
    CHECK(cudaMemcpyAsync(d_out, d_in, N, 3, s2));
    CHECK(cudaEventRecord(join_ev, s2));
    CHECK(cudaStreamWaitEvent(s1, join_ev, 0));
    CHECK(cudaMemcpyAsync(h_out, d_out, N, 2, s1));
    phase = 1;
    while (phase < 2) {}
    CHECK(cudaStreamEndCapture(s1, &graph));
    phase = 3;
    pthread_join(t, 0);

    CHECK(cudaGraphInstantiateWithFlags(&exec, graph, 0));
    for (int l = 0; l < 3; l++) {
        for (int i = 0; i < N; i++) h_in[i] = (unsigned char)(i * 7 + l * 50);
        CHECK(cudaGraphLaunch(exec, s1));
        CHECK(cudaStreamSynchronize(s1));
        for (int i = 0; i < N; i++)
            if (h_out[i] != h_in[i]) { printf("launch %d: byte %d wrong\n", l, i); return 1; }
    }
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
    printf("graph_program: ok\n");
    return 0;
}
