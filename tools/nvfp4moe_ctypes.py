"""ctypes bindings of nvfp4moe (build/libnvfp4moe.so) for the Python tools and tests:
the argument structs mirror nvfp4moe.h field by field."""
import ctypes
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
u64, c_int, c_uint, c_float = ctypes.c_uint64, ctypes.c_int, ctypes.c_uint, ctypes.c_float


class Allocator(ctypes.Structure):
    _fields_ = [("alloc_fn", ctypes.c_void_p), ("free_fn", ctypes.c_void_p), ("user_data", ctypes.c_void_p)]


class Logger(ctypes.Structure):
    _fields_ = [("func", ctypes.c_void_p), ("user_data", ctypes.c_void_p), ("level", c_int)]


class Desc(ctypes.Structure):
    _fields_ = [("device", c_int), ("cu_context", ctypes.c_void_p), ("cache_dir", ctypes.c_char_p),
                ("target", ctypes.c_char_p), ("backend", c_int), ("flags", c_uint),
                ("allocator", Allocator), ("logger", Logger)]


class Info(ctypes.Structure):
    _fields_ = [("gpu_name", ctypes.c_char * 128), ("target", ctypes.c_char * 16), ("cache_dir", ctypes.c_char * 512),
                ("cc_major", c_int), ("cc_minor", c_int), ("sm_count", c_int), ("nvrtc_major", c_int),
                ("nvrtc_minor", c_int), ("driver_version", c_int), ("gemm_backend", c_int), ("sm100_self_test", c_int),
                ("compiles", u64), ("disk_hits", u64), ("disk_writes", u64), ("disk_rejects", u64),
                ("modules_loaded", u64), ("compile_ms", ctypes.c_double)]


class QuantArgs(ctypes.Structure):
    _fields_ = [("dtype", c_int), ("groups", c_int), ("rows", c_int), ("k", c_int), ("x_row_stride", ctypes.c_longlong),
                ("x", u64), ("masked_m", u64), ("out_e2m1", u64), ("out_sf", u64), ("sf_layout", c_int),
                ("scale", u64), ("scale_value", c_float), ("gate_scale", u64), ("up_scale", u64), ("flags", c_uint)]


class GemmArgs(ctypes.Structure):
    _fields_ = [("groups", c_int), ("m_max", c_int), ("n", c_int), ("k", c_int), ("a", u64), ("a_sf", u64), ("b", u64),
                ("b_sf", u64), ("masked_m", u64), ("alpha", u64), ("row_scale", u64), ("d", u64),
                ("ldd", ctypes.c_longlong), ("expected_m", c_int), ("workspace", u64), ("workspace_size", ctypes.c_size_t),
                ("b_layout", c_int)]


class MoeWeights(ctypes.Structure):
    _fields_ = [("experts", c_int), ("hidden", c_int), ("inter", c_int), ("w13", u64), ("w13_sf", u64),
                ("w13_gate_scale", u64), ("w13_up_scale", u64), ("w2", u64), ("w2_sf", u64), ("w2_scale", u64),
                ("input_scale1", u64), ("input_scale2", u64), ("layout", c_int)]


class MoeArgs(ctypes.Structure):
    _fields_ = [("m_max", c_int), ("expected_m", c_int), ("scaling", c_int), ("quant_flags", c_uint), ("x", u64),
                ("masked_m", u64), ("out", u64), ("workspace", u64), ("workspace_size", ctypes.c_size_t)]


lib = ctypes.CDLL(os.path.join(ROOT, "build", "libnvfp4moe.so"))
lib.nvfp4moe_create.argtypes = [ctypes.POINTER(Desc), ctypes.POINTER(ctypes.c_void_p)]
lib.nvfp4moe_last_error.restype = ctypes.c_char_p
lib.nvfp4moe_query_info.argtypes = [ctypes.c_void_p, ctypes.POINTER(Info)]
for name, argt in [("nvfp4moe_quantize_per_token", QuantArgs), ("nvfp4moe_silu_mul_quantize_per_token", QuantArgs),
                   ("nvfp4moe_grouped_gemm_nt_masked", GemmArgs)]:
    getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.POINTER(argt), ctypes.c_void_p]
lib.nvfp4moe_moe_forward.argtypes = [ctypes.c_void_p, ctypes.POINTER(MoeWeights), ctypes.POINTER(MoeArgs), ctypes.c_void_p]
lib.nvfp4moe_moe_workspace_size.argtypes = [ctypes.POINTER(MoeWeights), c_int]
lib.nvfp4moe_moe_workspace_size.restype = ctypes.c_size_t
lib.nvfp4moe_moe_workspace_size_for.argtypes = [ctypes.c_void_p, ctypes.POINTER(MoeWeights), c_int, c_int]
lib.nvfp4moe_moe_workspace_size_for.restype = ctypes.c_size_t
lib.nvfp4moe_gemm_workspace_size.argtypes = [ctypes.c_void_p, ctypes.POINTER(GemmArgs)]
lib.nvfp4moe_gemm_workspace_size.restype = ctypes.c_size_t
lib.nvfp4moe_sf_bytes.argtypes = [c_int, c_int, c_int]
lib.nvfp4moe_sf_bytes.restype = ctypes.c_size_t
lib.nvfp4moe_weight_bytes.argtypes = [c_int, c_int, c_int]
lib.nvfp4moe_weight_bytes.restype = ctypes.c_size_t
lib.nvfp4moe_preferred_weight_layout.argtypes = [ctypes.c_void_p, c_int, c_int]
lib.nvfp4moe_preferred_weight_layout.restype = c_int
for name in ["nvfp4moe_ref_quantize_per_tensor", "nvfp4moe_ref_quantize_per_token"]:
    getattr(lib, name).argtypes = [ctypes.POINTER(QuantArgs)]

lib.nvfp4moe_destroy.argtypes = [ctypes.c_void_p]
