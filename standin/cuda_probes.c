/* Probes of a pass-through, built only with -DHRR_STAND_IN_PROBES (capture's tests/unseen.rs
 * builds the stand-in so; the harness never does): four names of CUDA's surface that
 * capture does not model, defined here with test signatures instead of their real ones,
 * so that what a caller gets back depends on every argument and its position. A
 * pass-through that loses or reorders an argument changes the result. Without the define
 * this file defines nothing and the stand-in lacks these functions, as it lacks graphics
 * interop and core dumps. Nothing here includes CUDA's headers (whose declarations these
 * contradict). */
#ifdef HRR_STAND_IN_PROBES
/* Graphics interop's map and unmap: success for exactly one (map) or two (unmap)
 * resources, whatever they are. */
int cudaGraphicsMapResources(int count, void** resources, void* stream);
int cudaGraphicsMapResources(int count, void** resources, void* stream) {
    (void)resources;
    (void)stream;
    return count == 1 ? 0 : 1;
}
int cudaGraphicsUnmapResources(int count, void** resources, void* stream);
int cudaGraphicsUnmapResources(int count, void** resources, void* stream) {
    (void)resources;
    (void)stream;
    return count == 2 ? 0 : 1;
}
/* Eight integer and pointer arguments (two on the stack), and doubles mixed with integers
 * (nine doubles: one on the stack): each result weighs every argument by its position. */
long cuGraphicsSubResourceGetMappedArray(long a, const char* b, int c, long d, long e, long f, long g, long h);
long cuGraphicsSubResourceGetMappedArray(long a, const char* b, int c, long d, long e, long f, long g, long h) {
    return a * 1 + (long)b[0] * 2 + c * 3 + d * 4 + e * 5 + f * 6 + g * 7 + h * 8;
}
double cuCoredumpSetAttributeGlobal(double a, int b, double c, const double* d, double e, double f, double g,
                                    double h, double i, double j, double k);
double cuCoredumpSetAttributeGlobal(double a, int b, double c, const double* d, double e, double f, double g,
                                    double h, double i, double j, double k) {
    return a * 1 + b * 2 + c * 3 + *d * 4 + e * 5 + f * 6 + g * 7 + h * 8 + i * 9 + j * 10 + k * 11;
}
#else
/* ISO C wants a translation unit to declare something. */
typedef int si_no_probes;
#endif
