// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Probe names for health: demangled by the C++ runtime, shortened to a readable width.
#include <string.h>
#include "common/demangle.h"
#include "unit.h"

#define EXECUTE "_ZN5torch8autograd6Engine7executeERKSt6vectorINS0_4EdgeESaIS3_EERKS2_IN2at6" \
		"TensorESaIS9_EEbbbS7_"
#define TO_CUSTOM "_ZNO3c106IValue13toCustomClassIN5torch8autograd8profiler20PythonRecord" \
		  "FunctionEEENS_13intrusive_ptrIT_NS_6detail34intrusive_target_default_null_" \
		  "typeIS7_EEEEv"

static void full_names(void)
{
	char out[1024];

	ASSERT_STREQ(demangle__full(EXECUTE, out, sizeof(out)),
		     "torch::autograd::Engine::execute(std::vector<torch::autograd::Edge, "
		     "std::allocator<torch::autograd::Edge> > const&, std::vector<at::Tensor, "
		     "std::allocator<at::Tensor> > const&, bool, bool, bool, "
		     "std::vector<torch::autograd::Edge, std::allocator<torch::autograd::Edge> > "
		     "const&)", "Engine::execute");
	ASSERT_STREQ(demangle__full("cudaLaunchKernel", out, sizeof(out)), "cudaLaunchKernel",
		     "a C name as it is");
	ASSERT_STREQ(demangle__full("_Znot a name", out, sizeof(out)), "_Znot a name",
		     "what does not demangle, as it is");
	ASSERT_STREQ(demangle__full(EXECUTE, out, 8), "torch::", "cut to the buffer");
}

static void short_names(void)
{
	char out[256];

	ASSERT_STREQ(demangle__short(EXECUTE, 40, out, sizeof(out)),
		     "torch::autograd::Engine::execute", "no parameters");
	ASSERT_STREQ(demangle__short(TO_CUSTOM, 40, out, sizeof(out)),
		     "c10::IValue::toCustomClass<...>", "no return type, no template arguments");
	ASSERT_STREQ(demangle__short(EXECUTE, 20, out, sizeof(out)), "...::Engine::execute",
		     "a long C++ name keeps its end");
	ASSERT_EQ(strlen(out), 20, "as wide as asked");
	ASSERT_STREQ(demangle__short("record_function_enter (static, torch 1.13 Debian)", 24, out,
				     sizeof(out)), "record_function_enter...", "a plain name keeps its start");
	ASSERT_STREQ(demangle__short("_ZN3fooclEv", 40, out, sizeof(out)), "foo::operator()",
		     "operator() keeps its parentheses");
	ASSERT_STREQ(demangle__short("_ZN3fooltERKS_", 40, out, sizeof(out)), "foo::operator<",
		     "operator< is no template");
	ASSERT_STREQ(demangle__short("_ZN12_GLOBAL__N_13bar3bazEv", 40, out, sizeof(out)),
		     "(anonymous namespace)::bar::baz", "an anonymous namespace stays whole");
}

int main(void)
{
	RUN_TEST(full_names);
	RUN_TEST(short_names);
	return unit__done();
}
