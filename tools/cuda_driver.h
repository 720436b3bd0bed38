/* cuda_driver.h -- device memory, streams, events and graphs for tests, tools and examples,
   through the driver entry points the library loaded (nvfp4moe_driver_symbol), so
   nothing links libcuda and a machine without a GPU can still run the binary. */
#ifndef NVFP4MOE_CUDA_DRIVER_H
#define NVFP4MOE_CUDA_DRIVER_H
#include <stdio.h>
#include <string.h>

#if defined(__GNUC__)
#define GU_FN static __attribute__((unused))
#else
#define GU_FN static
#endif

typedef int gu_res;
typedef void* gu_stream;
typedef void* gu_event;
typedef void* gu_graph;
typedef void* gu_graph_exec;

static struct {
  gu_res (*ctx_set_current)(void*);
  gu_res (*mem_alloc)(nvfp4moe_devptr*, size_t);
  gu_res (*mem_free)(nvfp4moe_devptr);
  gu_res (*htod)(nvfp4moe_devptr, const void*, size_t);
  gu_res (*dtoh)(void*, nvfp4moe_devptr, size_t);
  gu_res (*memset8)(nvfp4moe_devptr, unsigned char, size_t);
  gu_res (*ctx_sync)(void);
  gu_res (*stream_create)(gu_stream*, unsigned);
  gu_res (*stream_destroy)(gu_stream);
  gu_res (*stream_sync)(gu_stream);
  gu_res (*begin_capture)(gu_stream, int);
  gu_res (*end_capture)(gu_stream, gu_graph*);
  gu_res (*graph_instantiate)(gu_graph_exec*, gu_graph, unsigned long long);
  gu_res (*graph_launch)(gu_graph_exec, gu_stream);
  gu_res (*graph_exec_destroy)(gu_graph_exec);
  gu_res (*graph_destroy)(gu_graph);
  gu_res (*event_create)(gu_event*, unsigned);
  gu_res (*event_record)(gu_event, gu_stream);
  gu_res (*event_sync)(gu_event);
  gu_res (*event_elapsed)(float*, gu_event, gu_event);
  gu_res (*event_destroy)(gu_event);
  gu_res (*mem_get_info)(size_t*, size_t*);
} gu;

GU_FN int gu_bind(void** slot, const char* name) {
  return nvfp4moe_driver_symbol(name, slot) == NVFP4MOE_SUCCESS;
}

/* Creates a context on device 0 (or the given desc) and binds the driver calls.
   Returns 1 on success; 0 with *why set when there is no usable GPU. */
GU_FN int gu_open(const nvfp4moe_desc* desc, nvfp4moe_context** ctx, const char** why) {
  nvfp4moe_desc d;
  nvfp4moe_result r;
  int ok = 1;
  memset(&d, 0, sizeof d);
  if (desc) d = *desc;
  r = nvfp4moe_create(&d, ctx);
  if (r != NVFP4MOE_SUCCESS) {
    *why = nvfp4moe_last_error();
    return 0;
  }
  ok &= gu_bind((void**)&gu.ctx_set_current, "cuCtxSetCurrent");
  ok &= gu_bind((void**)&gu.mem_alloc, "cuMemAlloc");
  ok &= gu_bind((void**)&gu.mem_free, "cuMemFree");
  ok &= gu_bind((void**)&gu.htod, "cuMemcpyHtoD");
  ok &= gu_bind((void**)&gu.dtoh, "cuMemcpyDtoH");
  ok &= gu_bind((void**)&gu.memset8, "cuMemsetD8");
  ok &= gu_bind((void**)&gu.ctx_sync, "cuCtxSynchronize");
  ok &= gu_bind((void**)&gu.stream_create, "cuStreamCreate");
  ok &= gu_bind((void**)&gu.stream_destroy, "cuStreamDestroy");
  ok &= gu_bind((void**)&gu.stream_sync, "cuStreamSynchronize");
  ok &= gu_bind((void**)&gu.begin_capture, "cuStreamBeginCapture");
  ok &= gu_bind((void**)&gu.end_capture, "cuStreamEndCapture");
  ok &= gu_bind((void**)&gu.graph_instantiate, "cuGraphInstantiateWithFlags");
  ok &= gu_bind((void**)&gu.graph_launch, "cuGraphLaunch");
  ok &= gu_bind((void**)&gu.graph_exec_destroy, "cuGraphExecDestroy");
  ok &= gu_bind((void**)&gu.graph_destroy, "cuGraphDestroy");
  ok &= gu_bind((void**)&gu.event_create, "cuEventCreate");
  ok &= gu_bind((void**)&gu.event_record, "cuEventRecord");
  ok &= gu_bind((void**)&gu.event_sync, "cuEventSynchronize");
  ok &= gu_bind((void**)&gu.event_elapsed, "cuEventElapsedTime");
  ok &= gu_bind((void**)&gu.event_destroy, "cuEventDestroy");
  ok &= gu_bind((void**)&gu.mem_get_info, "cuMemGetInfo");
  if (!ok) {
    *why = "a driver entry point is missing";
    return 0;
  }
  gu.ctx_set_current(nvfp4moe_query_desc(*ctx).cu_context);
  return 1;
}

GU_FN void gu_check(gu_res r, const char* what) {
  if (r != 0) {
    fprintf(stderr, "CUDA error %d in %s\n", r, what);
    printf("FAIL cuda_call: %s returned %d\n", what, r);
    exit(2);
  }
}

GU_FN nvfp4moe_devptr gu_alloc(size_t n) {
  nvfp4moe_devptr p = 0;
  gu_check(gu.mem_alloc(&p, n ? n : 1), "cuMemAlloc");
  return p;
}
GU_FN void gu_free(nvfp4moe_devptr p) {
  if (p) gu.mem_free(p);
}
GU_FN void gu_put(nvfp4moe_devptr d, const void* h, size_t n) {
  if (n) gu_check(gu.htod(d, h, n), "cuMemcpyHtoD");
}
GU_FN void gu_get(void* h, nvfp4moe_devptr d, size_t n) {
  if (n) gu_check(gu.dtoh(h, d, n), "cuMemcpyDtoH");
}
GU_FN void gu_fill(nvfp4moe_devptr d, unsigned char v, size_t n) {
  if (n) gu_check(gu.memset8(d, v, n), "cuMemsetD8");
}
GU_FN void gu_sync(void) { gu_check(gu.ctx_sync(), "cuCtxSynchronize"); }
#endif
