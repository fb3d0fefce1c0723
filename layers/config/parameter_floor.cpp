#include "layers/config/parameter_floor.h"

#include <algorithm>

#include "layers/attention/mixer_table.h"
#include "layers/inputs/input_table.h"

namespace tn {

long double parameter_floor(const ModelConfig& c) {
  using Real = long double;
  const Real d = static_cast<Real>(c.d_model), V = static_cast<Real>(c.vocab_size);
  const Real d_ff = static_cast<Real>(c.channel_mixer.d_ff), classes = static_cast<Real>(c.num_classes);
  Real n = static_cast<Real>(input_entry(c.input.kind).parameters(c));
  if (c.positional == Positional::Learned) n += static_cast<Real>(c.max_positions) * d;
  const Real channel = (c.channel_mixer.type == ChannelMixerKind::GLU ? 3 : 2) * d * d_ff;
  for (const MixerKind kind : c.layers) {
    // q, k and v of every library mixer; a mixer with fewer (an added one) by its own count.
    const MixerEntry* entry = find_mixer(kind);
    n += (entry ? std::min(3 * d * d, static_cast<Real>(mixer_parameters(*entry, c))) : 3 * d * d) + channel;
    if (entry && entry->buffers) n += static_cast<Real>(entry->buffers(c));
  }
  if (!c.tie_embeddings) n += V * d;
  switch (c.head) {
    case HeadKind::LM: break;
    case HeadKind::MLM: n += d * d + V; break;
    case HeadKind::Classification: n += d * classes; break;
    case HeadKind::Retrieval: n += 4 * d * d + d * classes; break;
  }
  return n;
}

}  // namespace tn
