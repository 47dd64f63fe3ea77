// A library with GPU code: built twice, with the static runtime (nvcc's default: a
// private runtime capture never sees) and with -cudart shared.
__global__ void scale(float* x, float by) { x[threadIdx.x] *= by; }
extern "C" int lib_scale(float* dev, int n) {
    scale<<<1, n>>>(dev, 2.0f);
    return (int)cudaDeviceSynchronize();
}
