# TensorFold: small tools for Qwen3.5 models.
#
#   make          build the programs into bin/ (and the CUDA backend when nvcc is found)
#   make test     install what is missing, build, run the TAP tests with prove
#   make demo     install what is missing, build, let a small model write through a pipe
#   make install  copy the programs and man pages under PREFIX (after make)
#   make check    tests, man page lint, then the tests again under ASan and UBSan
#
# `make V=1` shows the full commands.

CC       = cc
# -ffp-contract=off: no fused multiply-add, so the CPU path rounds the same on
# every x86-64 and arm64 machine; the vector loops fix their own summation order.
CFLAGS   = -std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter -Wshadow \
           -ffp-contract=off -fno-math-errno -pthread
CPPFLAGS = -D_GNU_SOURCE -Ilib -Ikernels
LDFLAGS  = -pthread
PROVE    = prove
PYTHON   = python3
VENV     = .venv

ifdef SAN
CFLAGS  += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif

ifndef V
QUIET_CC   = @echo '   ' CC $@;
QUIET_NVCC = @echo '   ' NVCC $@;
QUIET_LINK = @echo '   ' LINK $@;
QUIET_AR   = @echo '   ' AR $@;
endif

# The CUDA backend (kernels/*.cu -> lib/libtfcuda.a) is built when nvcc is
# found on PATH or in CUDA_HOME; without it the CPU tools build as before and
# `--device cuda` says the build has no CUDA. `make NVCC=` forces a CPU build.
CUDA_HOME ?= /usr/local/cuda
NVCC      ?= $(shell command -v nvcc 2>/dev/null || { test -x $(CUDA_HOME)/bin/nvcc && echo $(CUDA_HOME)/bin/nvcc; })
# an nvcc too old for Hopper (before CUDA 12) cannot build the kernels: CPU build
ifneq ($(NVCC),)
ifeq ($(shell $(NVCC) --list-gpu-code 2>/dev/null | grep -qx sm_90 && echo ok),)
$(warning $(NVCC) cannot build for sm_90a; building without CUDA)
NO_CUDA_WHY := $(NVCC) cannot build for sm_90a
NVCC :=
endif
endif
# why a CPU build has no CUDA, for the message of --device cuda
ifeq ($(NVCC),)
ifeq ($(origin NVCC),command line)
NO_CUDA_WHY = it was built for the CPU only, with make NVCC=
endif
NO_CUDA_WHY ?= no nvcc was found on PATH or in $(CUDA_HOME) when it was built
CPPFLAGS += -DTF_NO_CUDA_WHY='"$(NO_CUDA_WHY)"'
endif
ifneq ($(NVCC),)
CUDA_DIR  := $(patsubst %/bin/nvcc,%,$(NVCC))
NVCCFLAGS  = -std=c++17 -O3
# Hopper's own instructions (wgmma, setmaxnreg) need the "a" target; the
# -gencode form assembles them where the -arch shorthand also runs a plain
# sm_90 pass that rejects them. H100/H200 are the target machines.
NVCCFLAGS += -gencode=arch=compute_90a,code=sm_90a
# line tables for compute-sanitizer and ncu: `make NVCC_DEBUG=-lineinfo`
# (no effect on the code, but the device code grows several times)
NVCCFLAGS += $(NVCC_DEBUG)
# the device code is stored compressed in the programs
NVCCFLAGS += -Xfatbin=-compress-all
# a spill to local memory in a bandwidth-bound kernel is a bug: say so
NVCCFLAGS += -Xptxas=--warn-on-spills
# no --use_fast_math: expf/rsqrtf stay IEEE-accurate so the GPU tracks the
# CPU reference; the hot products use explicit intrinsics anyway
NVCCFLAGS += -Xcompiler=-Wall -Ilib -Ikernels
CPPFLAGS  += -DTF_CUDA
# static cudart: programs start on a machine without a CUDA runtime library
# installed (CI) and fail cleanly at tf_cuda_init instead of at load time;
# cuBLASLt (prompt GEMMs) is found through the rpath.
LIBS_CUDA  = lib/libtfcuda.a lib/libtf.a -L$(CUDA_DIR)/lib64 -Wl,-rpath,$(CUDA_DIR)/lib64 \
             -Wl,--as-needed -lcublasLt -lcudart_static -ldl -lrt -lstdc++
CUDA_LIB   = lib/libtfcuda.a
endif

# libraries each program needs beyond libtf.a (static linking pulls in only
# the library objects a program uses, so tf-run does not need libcurl)
LIBS_BASE       = -ljansson -lm
LDLIBS_tf-run   = $(LIBS_BASE) $(LIBS_CUDA)
LDLIBS_tf-gate  = $(LIBS_BASE) -lcrypto
LDLIBS_tf-tok   = $(LIBS_BASE) -lpcre2-8 -lutf8proc
LDLIBS_tf-pack  = $(LIBS_BASE) -lcrypto
LDLIBS_tf-pull  = $(LIBS_BASE) -lcurl -larchive -lcrypto
LDLIBS_tf-bench = $(LIBS_BASE) $(LIBS_CUDA)
LDLIBS_tf-tree  = $(LIBS_BASE) $(LIBS_CUDA)
LDLIBS_tf-serve = $(LIBS_BASE) -lmicrohttpd -lpcre2-8 -lutf8proc $(LIBS_CUDA)
LDLIBS_test     = $(LIBS_BASE) -lcrypto -lpcre2-8 -lutf8proc -lcurl -larchive -lmicrohttpd $(LIBS_CUDA)
# the kernel tests (t/unit/cuda-*) and GPU builds on machines without the
# text and network libraries link only what they use
LDLIBS_cuda     = $(LIBS_BASE) $(LIBS_CUDA)

# lib/ holds one folder a subsystem; a library object is named by its file
# alone in libtf.a, so no two folders hold files of the same name
LIB_SRC  := $(sort $(wildcard lib/*/*.c))
LIB_OBJ  := $(LIB_SRC:.c=.o)
LIB_HDR  := $(wildcard lib/*/*.h) $(wildcard kernels/*.cuh)
CU_SRC   := $(sort $(wildcard kernels/*.cu))
CU_OBJ   := $(CU_SRC:.cu=.o)
PROGS    := $(patsubst %.c,%,$(sort $(wildcard bin/tf-*.c)))
UNIT     := $(patsubst %.c,%.t,$(sort $(wildcard t/unit/*.c)))
HELPERS  := $(patsubst %.c,%,$(sort $(wildcard t/helper/*.c)))
MANS     := $(sort $(wildcard man/*.[1-9]))
TESTS    := $(sort $(wildcard t/t[0-9]*.t))
FUZZ     := $(patsubst t/fuzz/fuzz-%.c,%,$(sort $(wildcard t/fuzz/fuzz-*.c)))
REPLAY   := $(FUZZ:%=t/fuzz/replay-%)

all: $(PROGS) $(UNIT) $(HELPERS) $(REPLAY)

lib/%.o: lib/%.c $(LIB_HDR)
	$(QUIET_CC)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

lib/libtf.a: $(LIB_OBJ)
	$(QUIET_AR)rm -f $@ && $(AR) rcs $@ $(LIB_OBJ)

kernels/%.o: kernels/%.cu $(LIB_HDR)
	$(QUIET_NVCC)$(NVCC) $(NVCCFLAGS) -c -o $@ $<

lib/libtfcuda.a: $(CU_OBJ)
	$(QUIET_AR)rm -f $@ && $(AR) rcs $@ $(CU_OBJ)

bin/tf-%: bin/tf-%.c lib/libtf.a $(CUDA_LIB) $(LIB_HDR)
	$(QUIET_LINK)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< lib/libtf.a $(LDLIBS_tf-$*)

# kernel tests need only libtf and the CUDA libraries, so they build on the
# GPU machine, which lacks the text and network libraries
t/unit/cuda-%.t: t/unit/cuda-%.c lib/libtf.a $(CUDA_LIB) $(LIB_HDR) $(wildcard t/*.h)
	$(QUIET_LINK)$(CC) $(CPPFLAGS) -It $(CFLAGS) $(LDFLAGS) -o $@ $< lib/libtf.a $(LDLIBS_cuda)

t/unit/%.t: t/unit/%.c lib/libtf.a $(CUDA_LIB) $(LIB_HDR) $(wildcard t/*.h)
	$(QUIET_LINK)$(CC) $(CPPFLAGS) -It $(CFLAGS) $(LDFLAGS) -o $@ $< lib/libtf.a $(LDLIBS_test)

t/helper/%: t/helper/%.c lib/libtf.a $(CUDA_LIB) $(LIB_HDR)
	$(QUIET_LINK)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< lib/libtf.a $(LDLIBS_test)

# Fuzz harnesses (t/fuzz): built with replay.c, each reads every input of
# its corpus once in `make test` (t/t0003-fuzz-corpus.t); `make fuzz`
# builds them for libFuzzer with clang, ASan and UBSan and runs each for
# FUZZ_S seconds (FUZZ_JOBS at once), new inputs and crashes going to
# t/fuzz/work/HARNESS. Single allocations may pass the RSS limit: libarchive
# reserves a cpio header's whole name length (4 GiB from a 1 KB file), which
# stays virtual and fails as a truncated archive, a clean error, not a defect.

t/fuzz/replay-%: t/fuzz/fuzz-%.c t/fuzz/replay.c t/fuzz/file.c t/fuzz/fuzz.h lib/libtf.a $(CUDA_LIB) $(LIB_HDR)
	$(QUIET_LINK)$(CC) $(CPPFLAGS) -It/fuzz $(CFLAGS) $(LDFLAGS) -o $@ $< t/fuzz/replay.c t/fuzz/file.c \
		lib/libtf.a $(LDLIBS_test)

FUZZ_CC    = clang
FUZZ_S     = 60
FUZZ_JOBS  = 1
FUZZ_SAN   = -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CPP   = $(filter-out -DTF_CUDA,$(CPPFLAGS))
# clang will not build the portable clone of the AVX2 loops (target_clones)
# around vector arguments, so the fuzz build is AVX2 throughout on x86-64
FUZZ_CFLAGS = -std=gnu11 -g -O1 -ffp-contract=off -pthread -fno-omit-frame-pointer $(FUZZ_SAN) \
              $(if $(filter x86_64,$(shell uname -m)),-mavx2)
FUZZ_OBJ   := $(LIB_SRC:%.c=t/fuzz/obj/%.o)
FUZZ_LIBS  = $(LIBS_BASE) -lcrypto -lpcre2-8 -lutf8proc -lcurl -larchive

t/fuzz/obj/%.o: %.c $(LIB_HDR)
	@mkdir -p $(dir $@)
	$(QUIET_CC)$(FUZZ_CC) $(FUZZ_CPP) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

t/fuzz/obj/libtf.a: $(FUZZ_OBJ)
	$(QUIET_AR)rm -f $@ && $(AR) rcs $@ $(FUZZ_OBJ)

t/fuzz/fuzz-%: t/fuzz/fuzz-%.c t/fuzz/file.c t/fuzz/fuzz.h t/fuzz/obj/libtf.a
	$(QUIET_LINK)$(FUZZ_CC) $(FUZZ_CPP) -It/fuzz $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< t/fuzz/file.c \
		t/fuzz/obj/libtf.a $(FUZZ_LIBS)

fuzz: $(FUZZ:%=t/fuzz/fuzz-%)
	@for h in $(FUZZ); do \
		mkdir -p t/fuzz/work/$$h || exit 1; \
		echo "fuzz-$$h: $(FUZZ_S) s"; \
		t/fuzz/fuzz-$$h -max_total_time=$(FUZZ_S) -jobs=$(FUZZ_JOBS) -workers=$(FUZZ_JOBS) \
			-max_len=400000 -rss_limit_mb=4096 -malloc_limit_mb=16384 -timeout=20 -print_final_stats=1 \
			-artifact_prefix=t/fuzz/work/$$h/ t/fuzz/work/$$h t/fuzz/corpus/$$h \
			>t/fuzz/work/$$h.log 2>&1; rc=$$?; \
		grep -E '^stat::number_of_executed_units|^stat::peak_rss' t/fuzz/work/$$h.log; \
		if [ $$rc != 0 ]; then tail -40 t/fuzz/work/$$h.log; exit 1; fi; \
	done

# The packages a fresh Debian 12 machine lacks: build headers, the test
# oracles' Python packages (in .venv), mandoc for the man lint. As root they
# are installed; otherwise the exact command is printed and make stops.
APT_PKGS = build-essential pkg-config libjansson-dev libpcre2-dev libutf8proc-dev \
           libcurl4-openssl-dev libarchive-dev libssl-dev libmicrohttpd-dev mandoc python3 python3-venv \
           zstd zip xz-utils curl jq
# mlx (its CPU build on Linux) and mlx-lm are tf-pack's oracle: their
# quantizer, converter and forward are what tf-pack and tf-run must match;
# tokenizers is tf-tok's; jinja2 renders the chat template tf-serve is held
# to, and openai is the client tf-serve's API is tested with; gguf (llama.cpp's
# gguf-py) writes the GGUF files tf-pack reads and dequantizes them for the check
PIP_PKGS = numpy tokenizers 'mlx[cpu]==0.32.4' mlx-lm==0.32.2 jinja2 openai gguf==0.19.0

deps-build:
	@missing=; \
	for p in $(APT_PKGS); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "installing:$$missing"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
		else \
			echo "missing packages; run:  sudo apt-get install$$missing"; exit 1; \
		fi; \
	fi

deps: deps-build
	@if [ ! -x $(VENV)/bin/python ]; then $(PYTHON) -m venv $(VENV) || exit 1; fi
	@$(VENV)/bin/python -c 'import sys; mods = sys.argv[1:]; [__import__(m.split("==")[0].replace("-", "_")) for m in mods]' \
		$(PIP_IMPORTS) 2>/dev/null || $(VENV)/bin/pip install -q $(PIP_PKGS)

PIP_IMPORTS = numpy tokenizers mlx.core mlx_lm jinja2 openai gguf

test: deps all
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PROVE) $(TESTS) $(UNIT)

demo: deps-build all
	@t/helper/demo.sh

# `make install` builds nothing: run make first, so that `sudo make install`
# leaves no files owned by root in the tree
PREFIX  = /usr/local
BINDIR  = $(PREFIX)/bin
MANDIR  = $(PREFIX)/share/man
INSTALL = install

install:
	@for p in $(PROGS); do \
		test -x $$p || { echo "$$p is not built: run make first" >&2; exit 1; }; \
	done
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7
	$(INSTALL) -m 755 $(PROGS) $(DESTDIR)$(BINDIR)
	$(INSTALL) -m 644 $(filter %.1,$(MANS)) $(DESTDIR)$(MANDIR)/man1
	$(INSTALL) -m 644 $(filter %.5,$(MANS)) $(DESTDIR)$(MANDIR)/man5
	$(INSTALL) -m 644 $(filter %.7,$(MANS)) $(DESTDIR)$(MANDIR)/man7

manlint:
	mandoc -Tlint -W warning $(MANS)

check: test manlint
	$(MAKE) clean
	$(MAKE) SAN=1 all
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
		PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PROVE) $(TESTS) $(UNIT)
	$(MAKE) clean
	$(MAKE) all

clean:
	rm -f lib/*/*.o lib/*.a kernels/*.o $(PROGS) $(UNIT) $(HELPERS) $(REPLAY) $(FUZZ:%=t/fuzz/fuzz-%)
	rm -rf t/fuzz/obj

.PHONY: all deps deps-build test demo install manlint check clean fuzz
