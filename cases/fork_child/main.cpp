// fork_child: the process forks before touching the GPU; parent and child each do their
// own GPU work. Capture must write two process directories, each replayable.
#include "../common/hrr_gpu.h"

#include <sys/wait.h>
#include <unistd.h>
#include <vector>

__global__ void tag(int* p, int who, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = who * 100000 + i;
}

static int gpu_work(int who) {
    const int n = 8192;
    int* d = nullptr;
    CHECK(hipMalloc((void**)&d, n * sizeof(int)));
    tag<<<n / 256, 256>>>(d, who, n);
    std::vector<int> got(n), want(n);
    for (int i = 0; i < n; ++i) want[i] = who * 100000 + i;
    CHECK(hipMemcpy(got.data(), d, n * sizeof(int), hipMemcpyDeviceToHost));
    CHECK(hipFree(d));
    for (int i = 0; i < n; ++i)
        if (hrr_kernels_ran() && got[i] != want[i]) return 1;
    return 0;
}

int main() {
    std::fflush(stdout);
    pid_t child = fork();
    if (child < 0) { std::perror("fork"); return 2; }
    if (child == 0) _exit(gpu_work(2));
    int parent_rc = gpu_work(1);
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::fprintf(stderr, "child failed (status %d)\n", status);
        return 1;
    }
    std::printf("fork_child: %s\n", parent_rc == 0 ? "ok" : "parent failed");
    return parent_rc;
}
