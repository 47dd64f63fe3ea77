// Kernels for code-object metadata tests: no HIP headers, no device library calls, so
// every toolchain here can compile and link them for every target.
struct Pair { float* in; float* out; int n; double scale; };
extern "C" __attribute__((global)) void axpy(float a, const float* x, float* y, int n) { if (n > 0) y[0] = a * x[0] + y[0]; }
__attribute__((global)) void scale_pair(Pair p, char tag, long long big) { if (p.n > 0) p.out[0] = p.in[0] * p.scale + tag + big; }
