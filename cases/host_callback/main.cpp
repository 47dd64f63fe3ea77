// host_callback: host callbacks on a stream (hipStreamAddCallback: HIP 5.2 has no
// hipLaunchHostFunc). Each of eight rounds queues a callback that fills the round's
// page-locked input (10 ms late, as a real host stage may be), then the copy in of that
// input, a kernel, the copy out, all on one stream, waited for once at the end; a last
// callback counts the rounds. No other process
// can run this program's host code: replay keeps each callback as an ordering point
// running its own function that does nothing, and capture reads each copy's source when
// the copy runs, after the callback that filled it (capture/src/source_reads.rs), so
// every round's output replays; the control `host_fn_source_order` reads them at the
// call instead, before the callbacks ran.
#include "../common/hrr_gpu.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

constexpr int ROUNDS = 8, N = 4096;

struct Round {
    int* in;
    int index;
};

static std::atomic<int> rounds{0};

static void fill(hipStream_t, hipError_t status, void* user) {
    Round* r = static_cast<Round*>(user);
    if (status != hipSuccess) return;
    // Slow, as real host stages are: the copies after it are issued long before it fills.
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    for (int i = 0; i < N; ++i) r->in[i] = i * 7 + r->index * 1000;
}

static void count(hipStream_t, hipError_t, void* user) { rounds += *static_cast<int*>(user); }

__global__ void square_plus(const int* in, int* out, int k, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * in[i] % 65521 + k;
}

int main() {
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    int *d_in = nullptr, *d_out = nullptr, *out = nullptr;
    CHECK(hipMalloc((void**)&d_in, N * sizeof(int)));
    CHECK(hipMalloc((void**)&d_out, ROUNDS * N * sizeof(int)));
    CHECK(hipHostMalloc((void**)&out, ROUNDS * N * sizeof(int), hipHostMallocDefault));
    static Round round[ROUNDS];
    for (int r = 0; r < ROUNDS; ++r) {
        CHECK(hipHostMalloc((void**)&round[r].in, N * sizeof(int), hipHostMallocDefault));
        round[r].index = r;
    }
    for (int r = 0; r < ROUNDS; ++r) {
        CHECK(hipStreamAddCallback(s, fill, &round[r], 0));
        CHECK(hipMemcpyAsync(d_in, round[r].in, N * sizeof(int), hipMemcpyHostToDevice, s));
        square_plus<<<N / 256, 256, 0, s>>>(d_in, d_out + r * N, r, N);
        CHECK(hipMemcpyAsync(out + r * N, d_out + r * N, N * sizeof(int), hipMemcpyDeviceToHost, s));
    }
    static int all = ROUNDS;
    CHECK(hipStreamAddCallback(s, count, &all, 0));
    CHECK(hipStreamSynchronize(s));
    std::vector<int> want(ROUNDS * N);
    for (int r = 0; r < ROUNDS; ++r)
        for (int i = 0; i < N; ++i) {
            long long v = i * 7 + r * 1000;
            want[r * N + i] = (int)(v * v % 65521) + r;
        }
    expect_equal("square_plus", out, want.data(), ROUNDS * N);
    if (rounds != ROUNDS) { std::fprintf(stderr, "callbacks counted %d\n", rounds.load()); return 1; }
    for (auto& r : round) CHECK(hipHostFree(r.in));
    CHECK(hipHostFree(out));
    CHECK(hipFree(d_in));
    CHECK(hipFree(d_out));
    CHECK(hipStreamDestroy(s));
    std::printf("host_callback: ok\n");
    return 0;
}
