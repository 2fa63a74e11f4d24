# TensorFold: small tools for Qwen3.5 models.
#
#   make          build the programs into bin/ (and the CUDA backend when nvcc is found)
#   make test     install what is missing, build, run the TAP tests with prove
#   make demo     build, then let a small model write through a pipe
#   make check    tests, man page lint, then the tests again under ASan and UBSan
#
# `make V=1` shows the full commands.

CC       = cc
# -ffp-contract=off: no fused multiply-add, so the CPU path rounds the same on
# every x86-64 and arm64 machine; the vector loops fix their own summation order.
CFLAGS   = -std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter -Wshadow \
           -ffp-contract=off -fno-math-errno -pthread
CPPFLAGS = -D_GNU_SOURCE -Ilib
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
QUIET_LINK = @echo '   ' LINK $@;
QUIET_AR   = @echo '   ' AR $@;
endif

# libraries each program needs beyond libtf.a (static linking pulls in only
# the library objects a program uses, so tf-run does not need libcurl)
LIBS_BASE       = -ljansson -lm
LDLIBS_tf-run   = $(LIBS_BASE)
LDLIBS_tf-gate  = $(LIBS_BASE) -lcrypto
LDLIBS_tf-tok   = $(LIBS_BASE) -lpcre2-8 -lutf8proc
LDLIBS_tf-pack  = $(LIBS_BASE) -lcrypto
LDLIBS_tf-pull  = $(LIBS_BASE) -lcurl -larchive -lcrypto
LDLIBS_tf-bench = $(LIBS_BASE)
LDLIBS_tf-tree  = $(LIBS_BASE)
LDLIBS_test     = $(LIBS_BASE) -lcrypto -lpcre2-8 -lutf8proc -lcurl -larchive

LIB_SRC  := $(sort $(wildcard lib/*.c))
LIB_OBJ  := $(LIB_SRC:.c=.o)
LIB_HDR  := $(wildcard lib/*.h)
PROGS    := $(patsubst %.c,%,$(sort $(wildcard bin/tf-*.c)))
UNIT     := $(patsubst %.c,%.t,$(sort $(wildcard t/unit/t*.c)))
HELPERS  := $(patsubst %.c,%,$(sort $(wildcard t/helper/*.c)))
MANS     := $(sort $(wildcard man/*.[1-9]))
TESTS    := $(sort $(wildcard t/t[0-9]*.t))

all: $(PROGS) $(UNIT) $(HELPERS)

lib/%.o: lib/%.c $(LIB_HDR)
	$(QUIET_CC)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

lib/libtf.a: $(LIB_OBJ)
	$(QUIET_AR)rm -f $@ && $(AR) rcs $@ $(LIB_OBJ)

bin/tf-%: bin/tf-%.c lib/libtf.a $(LIB_HDR)
	$(QUIET_LINK)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< lib/libtf.a $(LDLIBS_tf-$*)

t/unit/%.t: t/unit/%.c lib/libtf.a $(LIB_HDR) t/tap.h
	$(QUIET_LINK)$(CC) $(CPPFLAGS) -It $(CFLAGS) $(LDFLAGS) -o $@ $< lib/libtf.a $(LDLIBS_test)

t/helper/%: t/helper/%.c lib/libtf.a $(LIB_HDR)
	$(QUIET_LINK)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< lib/libtf.a $(LDLIBS_test)

# The packages a fresh Debian 12 machine lacks: build headers, the test
# oracles' Python packages (in .venv), mandoc for the man lint. As root they
# are installed; otherwise the exact command is printed and make stops.
APT_PKGS = build-essential pkg-config libjansson-dev libpcre2-dev libutf8proc-dev \
           libcurl4-openssl-dev libarchive-dev libssl-dev mandoc python3 python3-venv \
           zstd zip xz-utils
# mlx (its CPU build on Linux) and mlx-lm are tf-pack's oracle: their
# quantizer, converter and forward are what tf-pack and tf-run must match;
# tokenizers is tf-tok's
PIP_PKGS = numpy tokenizers 'mlx[cpu]==0.32.4' mlx-lm==0.32.2

deps:
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
	@if [ ! -x $(VENV)/bin/python ]; then $(PYTHON) -m venv $(VENV) || exit 1; fi
	@$(VENV)/bin/python -c 'import sys; mods = sys.argv[1:]; [__import__(m.split("==")[0].replace("-", "_")) for m in mods]' \
		$(PIP_IMPORTS) 2>/dev/null || $(VENV)/bin/pip install -q $(PIP_PKGS)

PIP_IMPORTS = numpy tokenizers mlx.core mlx_lm

test: deps all
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PROVE) $(TESTS) $(UNIT)

demo: all
	@t/helper/demo.sh

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
	rm -f lib/*.o lib/*.a $(PROGS) $(UNIT) $(HELPERS)

.PHONY: all deps test demo manlint check clean
