// cuda-samples shape: simpleTexture. A 2D array filled by cudaMemcpy2DToArray, read by a
// kernel through a texture object, the result copied back.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void transform(float* out, cudaTextureObject_t tex, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) out[y * w + x] = tex2D<float>(tex, x + 0.5f, y + 0.5f) * 2.0f + 1.0f;
}

int main() {
    const int w = 512, h = 512; size_t bytes = w * h * sizeof(float);
    float* in = new float[w * h]; float* out = new float[w * h];
    for (int i = 0; i < w * h; ++i) in[i] = (float)(i % 251);
    cudaChannelFormatDesc cd = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
    cudaArray_t arr; cudaMallocArray(&arr, &cd, w, h);
    cudaMemcpy2DToArray(arr, 0, 0, in, w * sizeof(float), w * sizeof(float), h, cudaMemcpyHostToDevice);
    cudaResourceDesc rd = {}; rd.resType = cudaResourceTypeArray; rd.res.array.array = arr;
    cudaTextureDesc td = {}; td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModePoint; td.readMode = cudaReadModeElementType;
    cudaTextureObject_t tex; cudaCreateTextureObject(&tex, &rd, &td, nullptr);
    float* d; cudaMalloc(&d, bytes);
    transform<<<dim3(w / 16, h / 16), dim3(16, 16)>>>(d, tex, w, h);
    cudaMemcpy(out, d, bytes, cudaMemcpyDeviceToHost);
    for (int i = 0; i < w * h; ++i) if (out[i] != in[i] * 2.0f + 1.0f) { fprintf(stderr, "out[%d] = %f\n", i, out[i]); return 1; }
    cudaDestroyTextureObject(tex); cudaFreeArray(arr); cudaFree(d);
    printf("simpleTexture completed, returned OK\n");
    return 0;
}
