# A thin layer over CMake. `make run` and `make test` are the two commands to know.
#   make            build the library and build/bin/etrt (Release; CUDA when found)
#   make run        build, then run the main job on the embedded default example
#   make test       everything CI runs: dependencies, sanitizer build, ctest, conformance, brief fuzzing
#   make bench-models  ResNet-50 and BERT-base: etrt against PyTorch eager and torch.compile (GPU)
#   make test-gpu   the GPU suite (ctest label gpu, conformance on cuda:0) on a machine with an NVIDIA GPU
#   make test-gpu-sanitize  the GPU tests under compute-sanitizer memcheck and racecheck
#   make test-python  the Python package's tests (tests/python_pkg): runtime API and the
#                   ExecuTorch AOT path, in a venv with executorch==1.5.1 (part of make test)
#   make test-tsan  the tests that share programs and streams between threads, under ThreadSanitizer
#   make format     clang-format every C, header and CUDA source in place
#   make format-check  fail (and list the files) when a source is not formatted
#   make fuzz       run every libFuzzer target for FUZZ_SECONDS each (default 600)
#   make venv-executorch  a virtual environment with ExecuTorch's exporter and runtime (pinned
#                   in tools/executorch/requirements.txt) in $(VENV_EXECUTORCH)
#   make test-executorch  re-export the ExecuTorch corpus and compare etrt with ExecuTorch live
#   make bench-executorch  etrt against ExecuTorch's portable runtime on the corpus (a table)
#   make conformance  the ONNX backend test data through build + run (CONFORMANCE_FLAGS=
#                   "--device cuda:0 --verbose ..."; see build/bin/etrt_conformance --help)
#   make bench-cpu  real models (torchvision, a BERT-base encoder, the OCR and NudeNet models that
#                   PyPI packages ship) through etrt and onnxruntime on the CPU, 1 thread and
#                   default threads: medians, ratios, peak memory
#   make bench-real  issue 14's real models (silero VAD, ddddocr's LSTM recogniser, Swin-T, ResNet-50
#                   and BERT quantized by onnxruntime) built and run against onnxruntime: one table
#                   (BENCH_REAL_FLAGS="--device cuda:0" for the GPU; ETRT_DEVICE=sim:1 without one)
#   make bench-cpu-kernels  conv/matmul shapes: etrt's CPU kernels vs oneDNN and XNNPACK (those
#                   whose Debian -dev packages are installed: make bench-deps)
# Options: ETRT_CUDA=AUTO|ON|OFF, JOBS=N, FUZZ_SECONDS=N; CMAKE_FLAGS=-DETRT_CPU_KERNELS=etrt|onednn
# picks the CPU convolution and matrix kernels (default onednn where dnnl.h is found).

ETRT_CUDA ?= AUTO
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
FUZZ_SECONDS ?= 600
CI_FUZZ_SECONDS ?= 20
PYTHON ?= /usr/bin/python3
CMAKE_FLAGS ?=
ONNX_TESTDATA ?= /usr/share/libonnx-testdata/data

BUILD := build
BUILD_ASAN := build-asan
BUILD_FUZZ := build-fuzz
BUILD_TSAN := build-tsan
CLANG_FORMAT ?= clang-format

.PHONY: venv-executorch test-executorch bench-executorch bench-models bench-cpu bench-real bench-cpu-kernels bench-deps bench-build all build run test test-tsan format format-check test-gpu test-gpu-sanitize fuzz fuzz-build fuzz-brief conformance deps clean bench

all: build

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DETRT_CUDA=$(ETRT_CUDA) $(CMAKE_FLAGS)

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/bin/etrt demo

# Debian packages the tests need; installed only where missing.
DEBIAN_PACKAGES := cmake clang clang-format libclang-rt-14-dev python3 python3-numpy python3-onnx libonnx-testdata \
  libdnnl-dev
deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

$(BUILD_ASAN)/CMakeCache.txt:
	cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=Debug -DETRT_SANITIZE=ON -DETRT_CUDA=$(ETRT_CUDA) $(CMAKE_FLAGS)

# LeakSanitizer's options for programs of the sanitizer build run outside ctest (which sets
# the same in tests/CMakeLists.txt): its thread tracer cannot scan the thread-local storage
# of oneDNN's OpenMP threads, and glibc keeps some loader state (tests/lsan.supp).
SANITIZER_TEST_ENV := LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:use_tls=0

test: deps format-check $(BUILD_ASAN)/CMakeCache.txt
	cmake --build $(BUILD_ASAN) -j $(JOBS)
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS) -LE gpu
	@# The same build with etrt's own convolution and matrix kernels (the other path of
	@# ETRT_CPU_KERNELS, chosen at run time): the C unit tests again.
	cd $(BUILD_ASAN) && ETRT_CPU_KERNELS=etrt ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
	  UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS) -L unit
	$(SANITIZER_TEST_ENV) $(MAKE) conformance BUILD=$(BUILD_ASAN)
	$(MAKE) test-tsan
	$(MAKE) fuzz-brief
	$(MAKE) test-python

# ThreadSanitizer excludes AddressSanitizer, so the tests labelled threads get a build of
# their own (CPU only: the simulated GPUs are what those tests share between threads).
$(BUILD_TSAN)/CMakeCache.txt:
	cmake -S . -B $(BUILD_TSAN) -DCMAKE_BUILD_TYPE=Debug -DETRT_TSAN=ON -DETRT_CUDA=OFF $(CMAKE_FLAGS)

test-tsan: $(BUILD_TSAN)/CMakeCache.txt
	cmake --build $(BUILD_TSAN) -j $(JOBS) --target thread_tests
	cd $(BUILD_TSAN) && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
	  ctest --output-on-failure -j $(JOBS) -L threads

# Every C, header and CUDA source that git tracks, formatted by the root .clang-format.
FORMAT_SOURCES = $(shell git ls-files '*.c' '*.h' '*.cu' 2>/dev/null)

format:
	$(CLANG_FORMAT) -i $(FORMAT_SOURCES)

format-check:
	@unformatted=""; for f in $(FORMAT_SOURCES); do \
	  $(CLANG_FORMAT) --dry-run --Werror $$f >/dev/null 2>&1 || unformatted="$$unformatted $$f"; done; \
	if [ -n "$$unformatted" ]; then \
	  echo "not formatted (run make format):$$unformatted"; exit 1; fi; \
	echo "format-check: $(words $(FORMAT_SOURCES)) files formatted"

# The GPU suite: every test labelled gpu, then the conformance cases built for cuda:0.
test-gpu: build
	cd $(BUILD) && ctest --output-on-failure -L gpu
	cd $(BUILD) && ETRT_TEST_REAL_GPU=1 ctest --output-on-failure -R 'python/test_build_(mlp|cnn|transformer|attention|shape_values)'
	$(MAKE) conformance CONFORMANCE_FLAGS="--device cuda:0 $(CONFORMANCE_FLAGS)"
	$(MAKE) test-python-gpu

# The GPU tests under compute-sanitizer's memcheck and racecheck. API errors are not
# listed: etrt checks every CUDA status itself and the tests assert on its refusals,
# some of which make CUDA fail on purpose (a foreign pointer freed, the per-thread
# stream under a green context). racecheck runs without the cuDNN graph path
# (ETRT_CUDNN_GRAPH=0): that path launches only kernels cuDNN compiles at run time, whose
# shared memory is cuDNN's, and timing them at context creation under racecheck took over
# eight minutes for gpu_test_conv_tuning alone; memcheck covers it.
COMPUTE_SANITIZER ?= compute-sanitizer
test-gpu-sanitize: build
	@set -e; for t in $(BUILD)/tests/gpu_*; do \
	  for tool in memcheck racecheck; do \
	    echo "compute-sanitizer --tool $$tool $$(basename $$t)"; \
	    graph=; [ $$tool = racecheck ] && graph=ETRT_CUDNN_GRAPH=0; \
	    env $$graph ETRT_TEST_UNDER_SANITIZER=1 $(COMPUTE_SANITIZER) --tool $$tool --report-api-errors no --error-exitcode 1 \
	      $$t > $(BUILD)/$$(basename $$t).$$tool.log 2>&1 || \
	      { tail -40 $(BUILD)/$$(basename $$t).$$tool.log; exit 1; }; \
	    tail -1 $(BUILD)/$$(basename $$t).$$tool.log; \
	  done; \
	done

# The pass rates reached so far (CPU), rounded down: a drop below one fails the run.
# The issue's goals are node 60, pytorch-converted 95, pytorch-operator 95.
CONFORMANCE_MIN_PASS ?= --min-pass node:95 --min-pass pytorch-converted:100 --min-pass pytorch-operator:100 --min-pass simple:30
conformance: build
	./$(BUILD)/bin/etrt_conformance --data $(ONNX_TESTDATA) -j $(JOBS) $(CONFORMANCE_MIN_PASS) $(CONFORMANCE_FLAGS)

$(BUILD_FUZZ)/CMakeCache.txt:
	CC=clang cmake -S . -B $(BUILD_FUZZ) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DETRT_FUZZ=ON -DETRT_CUDA=OFF -DETRT_TESTS=ON $(CMAKE_FLAGS)

fuzz-build: $(BUILD_FUZZ)/CMakeCache.txt
	cmake --build $(BUILD_FUZZ) -j $(JOBS)

# Each target runs from its kept corpus (tests/fuzz/corpus/<target>); new finds go to a
# scratch folder so that CI leaves the tree clean.
fuzz-brief: fuzz-build
	@set -e; for f in $(BUILD_FUZZ)/fuzz/fuzz_*; do \
	  t=$$(basename $$f); mkdir -p $(BUILD_FUZZ)/corpus-new/$$t; \
	  echo "fuzz $$t for $(CI_FUZZ_SECONDS)s"; \
	  $$f -max_total_time=$(CI_FUZZ_SECONDS) -print_final_stats=0 \
	    $(BUILD_FUZZ)/corpus-new/$$t tests/fuzz/corpus/$$t 2>$(BUILD_FUZZ)/$$t.log || { tail -50 $(BUILD_FUZZ)/$$t.log; exit 1; }; \
	done

fuzz: fuzz-build
	@set -e; for f in $(BUILD_FUZZ)/fuzz/fuzz_*; do \
	  t=$$(basename $$f); mkdir -p tests/fuzz/corpus/$$t; \
	  echo "fuzz $$t for $(FUZZ_SECONDS)s"; \
	  $$f -max_total_time=$(FUZZ_SECONDS) tests/fuzz/corpus/$$t 2>$(BUILD_FUZZ)/$$t.log || { tail -50 $(BUILD_FUZZ)/$$t.log; exit 1; }; \
	done

bench: build
	./$(BUILD)/bin/etrt bench

# GPU machine with PyTorch: ResNet-50 and BERT-base through etrt against PyTorch eager
# and torch.compile (bench/models.py; BENCH_MODELS_FLAGS="--batches 1,32 --no-compile").
# python3 of the PATH: the one with PyTorch.
BENCH_MODELS_FLAGS ?=
BENCH_MODELS_PYTHON ?= python3
bench-models: build
	ETRT_BIN=$(BUILD)/bin/etrt $(BENCH_MODELS_PYTHON) bench/models.py $(BENCH_MODELS_FLAGS)

bench-build: build
	ETRT_BIN=$(BUILD)/bin/etrt ETRT_BUILD_DIR=$(BUILD) $(PYTHON) bench/build_time.py

# ExecuTorch beside etrt (tools/executorch/). The environment takes about 6 GB and a few
# minutes the first time: PyPI's Linux torch is a CUDA build and brings the nvidia-* runtime
# packages along. None of this is part of `make test`, which reads the committed corpus.
VENV_EXECUTORCH ?= build-venv/executorch
EXECUTORCH_PYTHON := $(VENV_EXECUTORCH)/bin/python
BENCH_ITERATIONS ?= 50

$(VENV_EXECUTORCH)/.installed: tools/executorch/requirements.txt
	@$(PYTHON) -c "import ensurepip" 2>/dev/null || { \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq python3-venv; }
	$(PYTHON) -m venv $(VENV_EXECUTORCH)
	$(EXECUTORCH_PYTHON) -m pip install -q -r tools/executorch/requirements.txt
	touch $@

# An environment that already imports executorch (VENV_EXECUTORCH=/path/to/venv) is used as
# it is: nothing is created or installed into it.
venv-executorch:
	@$(EXECUTORCH_PYTHON) -c "import executorch.runtime" 2>/dev/null || \
	  $(MAKE) --no-print-directory $(VENV_EXECUTORCH)/.installed

# The corpus exported afresh into the build folder, its references taken from ExecuTorch's
# runtime there and then; etrt inspect held against ExecuTorch's deserializer on it, and
# etrt's outputs compared by the same test that reads the committed corpus.
test-executorch: venv-executorch build
	rm -rf $(BUILD)/executorch-corpus
	$(EXECUTORCH_PYTHON) tools/executorch/export_corpus.py --out $(BUILD)/executorch-corpus
	$(EXECUTORCH_PYTHON) tools/executorch/compare_inspect.py --etrt $(BUILD)/bin/etrt \
	  --corpus $(BUILD)/executorch-corpus
	ETRT_BIN=$(BUILD)/bin/etrt ETRT_EXECUTORCH_CORPUS=$(BUILD)/executorch-corpus \
	  $(PYTHON) tests/python/test_executorch_corpus.py
	@diff -rq -x README.md tests/data/executorch $(BUILD)/executorch-corpus >/dev/null && \
	  echo "the committed corpus is what the exporter writes today" || \
	  echo "note: the committed corpus differs from this export (regenerate it: tests/data/executorch/README.md)"

bench-executorch: venv-executorch build
	$(EXECUTORCH_PYTHON) tools/executorch/bench_corpus.py --etrt $(BUILD)/bin/etrt \
	  --corpus tests/data/executorch --iterations $(BENCH_ITERATIONS)

# bench-cpu needs torch, torchvision, onnx and onnxruntime: BENCH_PYTHON, by default a virtual
# environment made under build-bench/ with pip. Exported and downloaded models are cached there too.
BENCH_DIR := build-bench
BENCH_VENV_PYTHON := $(BENCH_DIR)/venv/bin/python
BENCH_PYTHON ?= $(BENCH_VENV_PYTHON)
BENCH_CPU_ITERATIONS ?= 5
BENCH_CPU_ROUNDS ?= 3
BENCH_DEBIAN_PACKAGES := time libdnnl-dev libxnnpack-dev libpthreadpool-dev

$(BENCH_VENV_PYTHON):
	$(PYTHON) -m venv $(BENCH_DIR)/venv
	$(BENCH_DIR)/venv/bin/pip install -q numpy onnx onnxruntime torch torchvision

bench-cpu: build $(filter $(BENCH_VENV_PYTHON),$(BENCH_PYTHON))
	$(BENCH_PYTHON) bench/cpu_models.py --etrt $(BUILD)/bin/etrt --cache $(BENCH_DIR) --iterations $(BENCH_CPU_ITERATIONS) \
		--rounds $(BENCH_CPU_ROUNDS)

# The same environment as bench-cpu; its models are cached under build-bench/real.
BENCH_REAL_FLAGS ?=
bench-real: build $(filter $(BENCH_VENV_PYTHON),$(BENCH_PYTHON))
	$(BENCH_PYTHON) bench/real_models.py --etrt $(BUILD)/bin/etrt --cache $(BENCH_DIR)/real $(BENCH_REAL_FLAGS)

bench-deps:
	@$(MAKE) deps DEBIAN_PACKAGES="$(BENCH_DEBIAN_PACKAGES)"

# The kernel comparison links a CPU-only library and whichever of oneDNN and XNNPACK is installed.
BENCH_KERNEL_DEFS := $(if $(wildcard /usr/include/oneapi/dnnl/dnnl.h),-DBENCH_ONEDNN) \
  $(if $(wildcard /usr/include/xnnpack.h),-DBENCH_XNNPACK)
BENCH_KERNEL_LIBS := $(if $(wildcard /usr/include/oneapi/dnnl/dnnl.h),-ldnnl -lgomp) \
  $(if $(wildcard /usr/include/xnnpack.h),-lXNNPACK -lpthreadpool)

bench-cpu-kernels:
	cmake -S . -B $(BENCH_DIR)/cpu -DCMAKE_BUILD_TYPE=Release -DETRT_CUDA=OFF -DETRT_TESTS=OFF
	cmake --build $(BENCH_DIR)/cpu -j $(JOBS) --target etrt
	$(CC) -O2 -std=gnu11 -D_GNU_SOURCE $(BENCH_KERNEL_DEFS) -Isrc -Iinclude bench/cpu_kernels.c \
	  $(BENCH_DIR)/cpu/libetrt.a $(BENCH_KERNEL_LIBS) -lpthread -lm -o $(BENCH_DIR)/cpu_kernels
	./$(BENCH_DIR)/cpu_kernels 1
	./$(BENCH_DIR)/cpu_kernels $(JOBS)

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_FUZZ) $(BUILD_TSAN) $(BUILD_PYTHON) $(BUILD_PYTHON)-cuda $(PYTHON_VENV)

# --- the Python package (pyproject.toml, python/etrt, tests/python_pkg) ---------------
# The extension is built in its own tree (Release, no sanitizers: it is loaded by an
# uninstrumented interpreter) and tested from the checkout; the AOT tests get a venv with
# the pinned executorch and torch (tools/executorch/requirements.txt where present).
BUILD_PYTHON ?= build-python
PYTHON_CUDA ?= OFF
PYTHON_TEST_ENV ?=
# One venv for the CPU and the CUDA runs (torch from PyPI has CUDA).
PYTHON_VENV ?= build-python-venv
PYTHON_REQUIREMENTS ?= $(firstword $(wildcard tools/executorch/requirements.txt) tests/python_pkg/requirements.txt)
PYTHON_DEBIAN_PACKAGES := python3-dev python3-venv

.PHONY: python-deps test-python test-python-gpu

python-deps:
	@missing=""; for p in $(PYTHON_DEBIAN_PACKAGES); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

$(BUILD_PYTHON)/CMakeCache.txt:
	cmake -S . -B $(BUILD_PYTHON) -DCMAKE_BUILD_TYPE=Release -DETRT_CUDA=$(PYTHON_CUDA) \
	  -DETRT_PYTHON=ON -DETRT_TESTS=OFF -DPython3_EXECUTABLE=$(PYTHON) $(CMAKE_FLAGS)

# --system-site-packages: NumPy and onnx come from Debian, as for the other tests.
$(PYTHON_VENV)/.installed: $(PYTHON_REQUIREMENTS)
	$(PYTHON) -m venv --system-site-packages $(PYTHON_VENV)
	$(PYTHON_VENV)/bin/python -m pip install -q --disable-pip-version-check -r $(PYTHON_REQUIREMENTS) pytest
	touch $@

test-python: deps python-deps $(BUILD_PYTHON)/CMakeCache.txt $(PYTHON_VENV)/.installed
	cmake --build $(BUILD_PYTHON) -j $(JOBS)
	$(PYTHON_TEST_ENV) ETRT_PYTHON_BUILD=$(CURDIR)/$(BUILD_PYTHON)/python/etrt \
	  ETRT_TOOL=$(CURDIR)/$(BUILD_PYTHON)/bin/etrt ETRT_REQUIRE_EXECUTORCH=1 \
	  $(PYTHON_VENV)/bin/python -m pytest -q -p no:cacheprovider tests/python_pkg

# The package's CUDA cases on a GPU machine, which may have no network: the extension
# built with CUDA against that machine's own python3 (with torch, numpy and pytest).
# Where ExecuTorch's exporter is missing there, ETRT_GPU_PROGRAMS names the programs
# tests/python_pkg/lower_gpu_programs.py lowered elsewhere.
GPU_PYTHON ?= python3
$(BUILD_PYTHON)-cuda/CMakeCache.txt:
	cmake -S . -B $(BUILD_PYTHON)-cuda -DCMAKE_BUILD_TYPE=Release -DETRT_CUDA=ON \
	  -DETRT_PYTHON=ON -DETRT_TESTS=OFF -DPython3_EXECUTABLE=$$(command -v $(GPU_PYTHON)) $(CMAKE_FLAGS)

test-python-gpu: $(BUILD_PYTHON)-cuda/CMakeCache.txt
	cmake --build $(BUILD_PYTHON)-cuda -j $(JOBS)
	ETRT_PYTHON_GPU=1 ETRT_PYTHON_BUILD=$(CURDIR)/$(BUILD_PYTHON)-cuda/python/etrt \
	  ETRT_TOOL=$(CURDIR)/$(BUILD_PYTHON)-cuda/bin/etrt \
	  $(GPU_PYTHON) -m pytest -q -p no:cacheprovider tests/python_pkg/test_pkg_runtime.py tests/python_pkg/test_pkg_gpu.py
