// N-API functions for the kernel cache's lookups (lib/rtc/cache-io.ts): a
// SHA-256 of strings and bytes, a file's identity, and a cache entry's two
// files read at once. NOTE [ First lookup ] in lib/rtc/cache-io.ts says why
// these are native.
#include <string>

#include "binding/bindings.h"
#include "binding/args.h"
#include "binding/js_errors.h"
#include "cache/cache_files.h"
#include "cache/sha256.h"
#include "base/error.h"

namespace gx::core::js {
namespace {

// Appends a string's UTF-8 bytes (lone surrogates as U+FFFD, as Node's
// crypto does) or an ArrayBufferView's bytes.
void append_part(std::string& out, const Napi::Value& v, uint32_t i) {
  if (v.IsString()) {
    out += v.As<Napi::String>().Utf8Value();
    return;
  }
  if (v.IsTypedArray()) {
    const Napi::TypedArray t = v.As<Napi::TypedArray>();
    out.append(static_cast<const char*>(t.ArrayBuffer().Data()) + t.ByteOffset(), t.ByteLength());
    return;
  }
  fail(ErrorKind::Type, "sha256: parts[", i, "] must be a string or a typed array");
}

// sha256(parts: (string | TypedArray)[]): the hex digest of the parts' bytes, in order.
Napi::Value Sha256Hex(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    GX_CHECK_TYPE(info[0].IsArray(), "sha256: argument 'parts' must be an array");
    const Napi::Array parts = info[0].As<Napi::Array>();
    const uint32_t n = parts.Length();
    if (n == 1 && parts.Get(0u).IsTypedArray()) {  // an image: hashed where it lies
      const Napi::TypedArray t = parts.Get(0u).As<Napi::TypedArray>();
      return Napi::String::New(info.Env(), cache::sha256_hex(static_cast<const uint8_t*>(t.ArrayBuffer().Data()) + t.ByteOffset(), t.ByteLength()));
    }
    std::string bytes;
    for (uint32_t i = 0; i < n; ++i) append_part(bytes, parts.Get(i), i);
    return Napi::String::New(info.Env(), cache::sha256_hex(bytes.data(), bytes.size()));
  });
}

}  // namespace

// [size, mtimeSec, mtimeNsec, dev, ino] (numbers, as Node's fs.Stats has them).
Napi::Array file_stat_array(Napi::Env env, const cache::FileStat& st) {
  Napi::Array out = Napi::Array::New(env, 5);
  out.Set(0u, Napi::Number::New(env, static_cast<double>(st.size)));
  out.Set(1u, Napi::Number::New(env, static_cast<double>(st.mtime_sec)));
  out.Set(2u, Napi::Number::New(env, static_cast<double>(st.mtime_nsec)));
  out.Set(3u, Napi::Number::New(env, static_cast<double>(st.dev)));
  out.Set(4u, Napi::Number::New(env, static_cast<double>(st.ino)));
  return out;
}

namespace {

// statFile(path): [size, mtimeSec, mtimeNsec, dev, ino] of a regular file (links followed), or null.
Napi::Value StatFile(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    cache::FileStat st;
    if (!cache::stat_file(arg_path(info, 0, "statFile", "path"), &st)) return info.Env().Null();
    return file_stat_array(info.Env(), st);
  });
}

bool is_key(const std::string& key) {
  if (key.size() != 64) return false;
  for (char c : key) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// readCacheEntry(dir, key): { meta: string, image: Uint8Array, imageSha256: string }
// from <dir>/<key>.json and <dir>/<key>.bin, the .json touched (the cache's
// LRU order); null when either is missing or unreadable. The
// caller checks the meta against the image.
Napi::Value ReadCacheEntry(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    constexpr const char* fn = "readCacheEntry";
    Napi::Env env = info.Env();
    const std::string dir = arg_path(info, 0, fn, "dir");
    const std::string key = arg_string(info, 1, fn, "key");
    GX_CHECK_VALUE(is_key(key), fn, ": '", key, "' is not a cache key (64 hex digits)");
    const std::string base = dir + "/" + key;

    std::string meta;
    size_t meta_size = 0;
    if (!cache::read_file(base + ".json", [&](size_t n) {
          meta.resize(n);
          return reinterpret_cast<uint8_t*>(meta.data());
        }, &meta_size)) {
      return env.Null();
    }
    Napi::ArrayBuffer image;
    size_t image_size = 0;
    if (!cache::read_file(base + ".bin", [&](size_t n) {
          image = Napi::ArrayBuffer::New(env, n);
          return static_cast<uint8_t*>(image.Data());
        }, &image_size)) {
      return env.Null();
    }
    // The entry's last use is its newest mtime (lib/rtc/cache.ts, evict): touching one file does.
    cache::touch_file(base + ".json");  // an entry evicted meanwhile: what was read is still whole
    Napi::Object out = Napi::Object::New(env);
    out.Set("meta", Napi::String::New(env, meta));
    out.Set("image", Napi::Uint8Array::New(env, image_size, image, 0));
    out.Set("imageSha256", Napi::String::New(env, cache::sha256_hex(image.Data(), image_size)));
    return out;
  });
}

}  // namespace

void register_cache_functions(Napi::Env env, Napi::Object exports) {
  exports.Set("sha256", Napi::Function::New<Sha256Hex>(env, "sha256"));
  exports.Set("statFile", Napi::Function::New<StatFile>(env, "statFile"));
  exports.Set("readCacheEntry", Napi::Function::New<ReadCacheEntry>(env, "readCacheEntry"));
}

}  // namespace gx::core::js
