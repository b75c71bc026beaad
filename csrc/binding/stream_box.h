// StreamBox: a stream as a JS handle (a type-tagged External, see
// tagged_external.h). Shared by stream_functions.cpp, which makes them, and
// the functions that accept a stream (rtc_launch.cpp).
#pragma once
#include <napi.h>

#include "cuda/runtime.h"

namespace gx::core::js {

struct StreamBox {
  static constexpr napi_type_tag kTag = {0x6770757873747265ULL, 0x616d000000000001ULL};
  static constexpr const char* kName = "Stream";
  cuda::Stream stream;
  int device;
  bool owned;  // created by gx.Stream (dropped with the handle, NOTE [ Streams are kept ]), or a core stream
  ~StreamBox() {
    if (owned) cuda::drop_stream(device, stream);
  }
};

}  // namespace gx::core::js
