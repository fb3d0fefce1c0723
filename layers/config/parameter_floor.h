#pragma once
// The fewest values a model of a given config holds, counted from its shapes without building it:
// what a checkpoint's stored config is compared with before the model it describes is allocated
// (layers/persistence/checkpoint.cpp), so a config that claims a larger model than its file holds is refused
// by name instead of being allocated (a 600 KB file whose config said d_ff 10^7 took 3 GB; one
// that said 2^62 wrapped a weight's size and crashed).
#include "layers/config/model_config.h"

namespace tn {

/// A lower bound of the parameters and buffers of TransNormerModel(config), in long double so no
/// size of a hostile config overflows: the input's own parameters (vocab_size × d_model for a
/// token embedding), learned positions (max_positions × d_model), per layer the token mixer's q,
/// k and v projections (3·d_model²; every library mixer has them; an added mixer with fewer
/// parameters, its table count instead) plus a Performer's random features
/// (features × d_model), the channel mixer's weights (3·d_model·d_ff for the GLU, 2·d_model·d_ff
/// for the FFN), an untied output matrix (vocab_size × d_model), and the head's own weights (mlm:
/// d_model² + vocab_size; classification: d_model × num_classes; retrieval: 4·d_model² +
/// d_model × num_classes). Biases and norms are left out, so a real model never holds fewer.
long double parameter_floor(const ModelConfig& config);

}  // namespace tn
