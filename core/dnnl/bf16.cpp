#include "core/dnnl/bf16.h"

#include "core/dnnl/engine.h"
#include "core/dnnl/primitive_cache.h"

namespace tn {

void to_bf16_flat(const float* src, uint16_t* dst, int64_t n) {
  if (n <= 0) return;
  using dnnl::memory;
  struct Entry {
    dnnl::reorder prim;
    memory::desc from, to;
  };
  static PrimitiveCache<int64_t, Entry> cache;
  const std::shared_ptr<const Entry> entry = cache.get(n, [n] {
    memory::desc from({n}, memory::data_type::f32, memory::format_tag::a);
    memory::desc to({n}, memory::data_type::bf16, memory::format_tag::a);
    dnnl::reorder::primitive_desc pd(cpu_engine(), from, cpu_engine(), to);
    return Entry{dnnl::reorder(pd), from, to};
  });
  memory from(entry->from, cpu_engine(), const_cast<float*>(src));
  memory to(entry->to, cpu_engine(), dst);
  entry->prim.execute(cpu_stream(), from, to);
  cpu_stream().wait();
}

std::shared_ptr<const Bf16Buffer> Bf16Buffer::copy_of(const float* src, int64_t n) {
  auto out = std::make_shared<Bf16Buffer>(n);
  to_bf16_flat(src, out->data(), n);
  return out;
}

}  // namespace tn
