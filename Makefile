# nvfp4moe -- build the embedded header, examples, tools and tests.
#   make            regenerate the embedded kernel source in nvfp4moe.h, build everything
#   make run        the main job: the MoE expert layer example
#   make test       the test suite (GPU parts skip with a message where there is no GPU)
#   make bench      benchmark on the GPU (writes bench/results/<gpu>.json)
CC ?= cc
CFLAGS ?= -O2 -g
CFLAGS += -std=c99 -Wall -Wextra -ffp-contract=off
LDLIBS := -ldl -lm -lpthread
B := build

EXAMPLES := $(B)/quantize_example $(B)/grouped_gemm_example $(B)/moe_layer
TOOLS := $(B)/nvfp4moe_precompile $(B)/jit_timing $(B)/profile_kernels $(B)/libnvfp4moe.so
TESTS := $(B)/test_cpu $(B)/test_cache $(B)/test_nvrtc $(B)/test_gpu $(B)/test_sm100_encoders $(B)/test_sm100_model

.PHONY: all embed run test tests examples bench clean
all: $(EXAMPLES) $(TOOLS) $(TESTS)

# The header embeds kernels_src/; `make` rewrites that region (CI only checks it). A rule of its
# own, so that under -j every binary waits for it (as a phony prerequisite of `all` beside them,
# `make -j` compiled the old kernels into the tools while the header was being rewritten).
# Without python3 the header is used as committed (a fresh clone's checkout order can make the
# sources look newer than it; CI checks that it matches them).
nvfp4moe.h: $(wildcard kernels_src/*) tools/embed_kernels.py
	@if command -v python3 > /dev/null 2>&1; then python3 tools/embed_kernels.py; \
	 else echo "python3 not found: nvfp4moe.h used as committed (after editing kernels_src/, run make embed with python3)"; fi
	@touch $@
embed:
	python3 tools/embed_kernels.py

$(B):
	mkdir -p $(B)
$(B)/quantize_example: examples/quantize.c tools/cuda_driver.h nvfp4moe.h | $(B)
	$(CC) $(CFLAGS) $< -o $@ $(LDLIBS)
$(B)/grouped_gemm_example: examples/grouped_gemm.c tools/cuda_driver.h nvfp4moe.h | $(B)
	$(CC) $(CFLAGS) $< -o $@ $(LDLIBS)
$(B)/moe_layer: examples/moe_layer.c tools/cuda_driver.h nvfp4moe.h | $(B)
	$(CC) $(CFLAGS) $< -o $@ $(LDLIBS)
$(B)/nvfp4moe_precompile: tools/nvfp4moe_precompile.c nvfp4moe.h | $(B)
	$(CC) $(CFLAGS) $< -o $@ $(LDLIBS)
$(B)/jit_timing: tools/jit_timing.c tools/cuda_driver.h nvfp4moe.h | $(B)
	$(CC) $(CFLAGS) $< -o $@ $(LDLIBS)
$(B)/profile_kernels: tools/profile_kernels.c tools/cuda_driver.h nvfp4moe.h | $(B)
	$(CC) $(CFLAGS) $< -o $@ $(LDLIBS)
$(B)/libnvfp4moe.so: tools/libnvfp4moe.c nvfp4moe.h | $(B)
	$(CC) $(CFLAGS) -fPIC -shared $< -o $@ $(LDLIBS)
$(B)/test_%: tests/test_%.c tests/test_util.h tools/cuda_driver.h nvfp4moe.h | $(B)
	$(CC) $(CFLAGS) $< -o $@ $(LDLIBS)

tests: $(TESTS) $(TOOLS)
examples: $(EXAMPLES)

run: $(B)/moe_layer
	./$(B)/moe_layer

test:
	bash tests/run.sh

bench: $(B)/libnvfp4moe.so
	python3 tools/bench.py

clean:
	rm -rf $(B)
