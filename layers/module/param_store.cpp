#include "layers/module/param_store.h"

#include "core/error.h"

namespace tn {

Var ParamStore::add_parameter(const std::string& name, const Shape& shape) {
  if (entries_.count(name)) throw ShapeError("[param_store] duplicate parameter " + name);
  Var v = make_var(Tensor::zeros(shape), true);
  entries_[name] = v;
  buffer_[name] = false;
  return v;
}

Var ParamStore::add_buffer(const std::string& name, const Shape& shape) {
  if (entries_.count(name)) throw ShapeError("[param_store] duplicate buffer " + name);
  Var v = make_var(Tensor::zeros(shape), false);
  entries_[name] = v;
  buffer_[name] = true;
  return v;
}

bool ParamStore::is_buffer(const std::string& name) const {
  auto it = buffer_.find(name);
  return it != buffer_.end() && it->second;
}

std::vector<std::pair<std::string, Var>> ParamStore::parameters() const {
  std::vector<std::pair<std::string, Var>> out;
  for (const auto& [name, var] : entries_)
    if (!is_buffer(name)) out.emplace_back(name, var);
  return out;
}

int64_t ParamStore::parameter_count() const {
  int64_t n = 0;
  for (const auto& [name, var] : parameters()) n += var->value.numel();
  return n;
}

void ParamStore::zero_grad() {
  for (auto& [name, var] : entries_) var->grad() = Tensor();
}

}  // namespace tn
