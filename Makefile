# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# cirron-probe: one binary with the BPF object and probe definitions built in.
OUTPUT := .output
CLANG ?= clang
CC ?= cc
BPFTOOL ?= bpftool
PYTHON ?= /usr/bin/python3
ARCH := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
VERSION := 0.1.0

CFLAGS ?= -g -O2
WARN := -Wall -Wextra -Werror -Werror=undef -Wno-unused-parameter
CPPFLAGS := -I$(OUTPUT) -Ibpf -Iuser -DCIRRON_VERSION='"$(VERSION)"' -D_GNU_SOURCE
LDLIBS := -Wl,-Bstatic -lbpf -Wl,-Bdynamic -lelf -lz -lcjson
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

USER_SRCS := $(wildcard user/*.c)
CORE_SRCS := $(filter-out user/main.c,$(USER_SRCS))
PROBE_FILES := $(sort $(wildcard probes/*.json))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all deps demo test test-unit test-e2e lint vmlinux clean bench trixie-root

all: cirron-probe

$(OUTPUT) $(OUTPUT)/san $(OUTPUT)/tests:
	$(Q)mkdir -p $@

$(OUTPUT)/cirron.bpf.o: bpf/cirron.bpf.c bpf/cirron.h vmlinux.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -I. -Ibpf -Wall -Werror \
		-c $< -o $@.tmp && $(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(OUTPUT)/cirron.skel.h: $(OUTPUT)/cirron.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name cirron_bpf > $@

# probes/*.json are data; they are built into the binary so it needs no files at run time.
$(OUTPUT)/probe_files.S: $(PROBE_FILES) | $(OUTPUT)
	$(call msg,EMBED,$@)
	$(Q){ printf '\t.section .rodata\n\t.global embedded_probe_files\nembedded_probe_files:\n'; \
	  for f in $(PROBE_FILES); do printf '\t.incbin "%s"\n\t.byte 0x1e\n' "$$f"; done; \
	  printf '\t.byte 0\n\t.section .note.GNU-stack,"",@progbits\n'; } > $@

$(OUTPUT)/%.o: user/%.c $(OUTPUT)/cirron.skel.h | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -MMD -c $< -o $@

$(OUTPUT)/probe_files.o: $(OUTPUT)/probe_files.S
	$(call msg,AS,$@)
	$(Q)$(CC) -c $< -o $@

cirron-probe: $(patsubst user/%.c,$(OUTPUT)/%.o,$(USER_SRCS)) $(OUTPUT)/probe_files.o
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

# Unit tests and a sanitizer build of the whole binary (ASan + UBSan) for the e2e tests.
$(OUTPUT)/san/%.o: user/%.c $(OUTPUT)/cirron.skel.h | $(OUTPUT)/san
	$(Q)$(CC) $(CPPFLAGS) -g -O1 $(SAN) $(WARN) -MMD -c $< -o $@

$(OUTPUT)/cirron-probe-san: $(patsubst user/%.c,$(OUTPUT)/san/%.o,$(USER_SRCS)) $(OUTPUT)/probe_files.o
	$(call msg,BINARY,$@)
	$(Q)$(CC) -g $(SAN) $^ $(LDLIBS) -o $@

$(OUTPUT)/tests/%: tests/unit/%.c tests/unit/unit.h $(patsubst user/%.c,$(OUTPUT)/san/%.o,$(CORE_SRCS)) $(OUTPUT)/probe_files.o | $(OUTPUT)/tests
	$(call msg,UNIT,$@)
	$(Q)$(CC) $(CPPFLAGS) -Itests/unit -g -O1 $(SAN) $(WARN) $^ $(LDLIBS) -o $@

# Real CUDA runtime target: calls each probed API a known number of times.
$(OUTPUT)/tests/cuda_calls: tests/targets/cuda_calls.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -g -O0 -I/usr/local/cuda/include $< -o $@ -L/usr/local/cuda/lib64 -lcudart \
		-Wl,-rpath,/usr/local/cuda/lib64

$(OUTPUT)/tests/spin: tests/targets/spin.c | $(OUTPUT)/tests
	$(Q)$(CC) -g -O0 $< -o $@

deps:
	$(Q)scripts/install-deps.sh

test-unit: $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(UNIT_SRCS))
	$(Q)for t in $^; do $$t || exit 1; done

# The Debian trixie root (Python 3.13 + torch 2.6) the PyTorch tests also run in: built once
# (a few minutes), cached outside the repository.
trixie-root:
	$(Q)tests/scripts/make-trixie-root.sh

test-e2e: cirron-probe $(OUTPUT)/cirron-probe-san $(OUTPUT)/tests/cuda_calls $(OUTPUT)/tests/spin trixie-root
	$(Q)$(PYTHON) -m pytest -q -rs tests/e2e

test: deps
	$(Q)$(MAKE) --no-print-directory test-unit
	$(Q)$(MAKE) --no-print-directory test-e2e

demo: deps
	$(Q)$(MAKE) --no-print-directory cirron-probe
	$(Q)scripts/demo.sh

# Benchmarks (bench/run.sh; bpftrace is installed there if missing): bench/RESULTS.md
bench: deps cirron-probe $(OUTPUT)/tests/cuda_calls trixie-root
	$(Q)bench/run.sh

lint: $(OUTPUT)/cirron.skel.h
	$(Q)clang-tidy --quiet $(filter-out user/bpf_object.c,$(USER_SRCS)) -- $(CPPFLAGS)
	@# bpftool's generated skeleton trips a false leak report; the rest of the file is checked
	$(Q)clang-tidy --quiet --checks=-clang-analyzer-unix.Malloc user/bpf_object.c -- $(CPPFLAGS)
	$(Q)cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
		--inline-suppr $(CPPFLAGS) --suppress=missingIncludeSystem user/

vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux.h

clean:
	rm -rf $(OUTPUT) cirron-probe

-include $(wildcard $(OUTPUT)/*.d $(OUTPUT)/san/*.d)
