# The gpuext core addon: the C++ tensor core and its N-API binding.
# CUDA parts are built when scripts/find-cuda.js finds a toolkit; otherwise the
# core is CPU-only (csrc/cuda/no_cuda.cpp). .cu files go through an nvcc rule.
{
  "variables": {
    "cuda_home%": "<!(node scripts/find-cuda.js home)",
    "with_cuda%": "<!(node scripts/find-cuda.js enabled)",
    # 1 in a build for packing (scripts/prebuild.js sets GPUEXT_PREBUILD=1).
    "prebuild%": "<!(node -p \"process.env.GPUEXT_PREBUILD === '1' ? 1 : 0\")"
  },
  "targets": [
    {
      "target_name": "gpuext_core",
      "sources": [
        "csrc/cache/cache_files.cpp",
        "csrc/cache/sha256.cpp",
        "csrc/core/abi.cpp",
        "csrc/core/cpu_allocator.cpp",
        "csrc/core/cpu_kernels.cpp",
        "csrc/core/extension_loader.cpp",
        "csrc/base/file_read.cpp",
        "csrc/core/op_call.cpp",
        "csrc/core/registry.cpp",
        "csrc/core/schema.cpp",
        "csrc/core/storage.cpp",
        "csrc/core/tensor.cpp",
        "csrc/core/tensor_cache.cpp",
        "csrc/core/tensor_ops.cpp",
        "csrc/binding/addon.cpp",
        "csrc/binding/args.cpp",
        "csrc/binding/cache_functions.cpp",
        "csrc/binding/js_errors.cpp",
        "csrc/binding/op_functions.cpp",
        "csrc/binding/op_values.cpp",
        "csrc/binding/rtc_compile.cpp",
        "csrc/binding/rtc_launch.cpp",
        "csrc/binding/rtc_modules.cpp",
        "csrc/binding/device_functions.cpp",
        "csrc/binding/file_functions.cpp",
        "csrc/binding/staging.cpp",
        "csrc/binding/stream_functions.cpp",
        "csrc/binding/tensor_functions.cpp",
        "csrc/binding/tensor_handle.cpp"
      ],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")",
        "csrc",
        "csrc/include"
      ],
      # NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS: while a worker (or the
      # process) is being stopped, N-API cannot throw into JS; without it
      # node-addon-api turns the failed throw into a C++ exception nothing
      # catches, and the whole process aborts (test/worker-shutdown.test.ts).
      # NAPI_EXPERIMENTAL: see NOTE [ Finalizers inside the GC ] in
      # csrc/binding/tagged_external.h.
      "defines": ["NAPI_EXPERIMENTAL", "NAPI_CPP_EXCEPTIONS", "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS"],
      "libraries": ["-ldl"],
      # Bind every symbol when the addon loads: resolved lazily, each N-API or
      # libc function's first call paid a symbol lookup, and a process's first
      # kernel-cache hit paid about 130 us of them (0.415 -> 0.282 ms here,
      # with no measurable change to the import).
      "ldflags": ["-Wl,-z,now"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++17"],
      # -ffile-prefix-map: __FILE__ (in error messages) says csrc/..., not the
      # builder's checkout path, which a packed prebuilt binary would carry.
      # -fvisibility=hidden: the addon exports only its N-API entry (extensions reach the core through the
      # table gx_extension_init_v1 hands them, csrc/include/gpuext/api.h), so calls inside the core
      # bind locally, not through the PLT. Its thread_locals: NOTE [ Thread-locals of the core ].
      "cflags_cc": ["-std=c++17", "-fexceptions", "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter",
                    "-fvisibility=hidden", "-fvisibility-inlines-hidden",
                    "-ffile-prefix-map=<(module_root_dir)/="],
      "conditions": [
        ["with_cuda==1", {
          "sources": [
            "csrc/cuda/caching_allocator.cpp",
            "csrc/cuda/pinned_allocator.cpp",
            "csrc/cuda/runtime.cpp",
            "csrc/cuda/staged_copy.cpp",
            "csrc/rtc/driver.cpp",
            "csrc/rtc/nvrtc.cpp",
            "csrc/cuda/core_kernels.cu"
          ],
          "include_dirs": ["<(cuda_home)/include"],
          "libraries": ["-L<(cuda_home)/lib64", "-lcudart_static", "-lpthread", "-lrt"],
          "rules": [
            {
              "rule_name": "nvcc",
              "extension": "cu",
              "inputs": ["<(RULE_INPUT_PATH)"],
              "outputs": ["<(INTERMEDIATE_DIR)/<(RULE_INPUT_ROOT).o"],
              "action": [
                "<(cuda_home)/bin/nvcc", "-std=c++17", "-O3", "-Xcompiler", "-fPIC", "-Xcompiler", "-fvisibility=hidden",
                "-Xcompiler", "-ffile-prefix-map=<(module_root_dir)/=",
                "<!@(node scripts/find-cuda.js gencode)", "<!@(node scripts/find-cuda.js fatbin)",
                "-I<(module_root_dir)/csrc", "-I<(module_root_dir)/csrc/include",
                "-c", "<(RULE_INPUT_PATH)", "-o", "<@(_outputs)"
              ],
              "message": "nvcc <(RULE_INPUT_PATH)",
              "process_outputs_as_sources": 1
            }
          ]
        }, {
          "sources": ["csrc/cuda/no_cuda.cpp", "csrc/rtc/no_rtc.cpp"]
        }],
        # A prebuilt binary loads on glibc 2.28 and needs no system libstdc++:
        # NOTE [ The glibc floor of the prebuilt binaries ] in csrc/compat/glibc_floor.cpp.
        ["prebuild==1 and OS=='linux'", {
          "sources": ["csrc/compat/glibc_floor.cpp"],
          "ldflags": ["<!@(node scripts/glibc-floor.js ldflags)"]
        }]
      ]
    }
  ]
}
