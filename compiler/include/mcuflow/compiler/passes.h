// Graph passes: small, named, each doing one thing, run in this order by the pipeline.
#pragma once
#include "mcuflow/compiler/ir.h"

namespace mcuflow::compiler {

void remove_identities(Graph& g);        // dropout, clone, … : consumers read the input
void stream_convs(Graph& g);             // conv(cat(state, x)) keeping cat's last frames → conv over a ring state
void lift_rows(Graph& g);                // ops between 1-D layers run on their (N, C, 1, L) row views
void fold_pads(Graph& g);                // zero pad of H, W → the reading conv's / avg pool's padding
void fold_batch_norm(Graph& g);          // conv/linear → batch_norm: scale weights, shift bias
void lower_batch_norm(Graph& g);         // remaining batch_norm → per-channel mul + add
void fuse_activations(Graph& g);         // conv/linear/add/mul → relu/clamp: bounds move into the op
void fold_constants(Graph& g);           // ops over constants only are evaluated now
void remove_dead_ops(Graph& g);          // ops whose results nobody reads
void assign_layouts(Graph& g);           // rank-4 activations around image ops are NHWC on device
void fold_flatten_into_linear(Graph& g); // flatten of NHWC → linear: permute weight columns instead

// Not part of run_graph_passes (compile_graph runs it after quantization with
// CompileOptions::patches, and keeps the bands only when their plan is smaller): the
// convolutions from the first graph input on, up to the stage end with the lowest estimated
// peak (none when no end lowers it), run in `patches` horizontal bands (slice → copies of the
// ops → cat along H), bit-exact. `element_bytes`: bytes of one activation value (int8: 1).
// `stream_input`: each band's input rows are fetched from the application (op "input_rows",
// lowered to read_input_rows) instead of sliced from the whole input, which then never exists.
void split_into_patches(Graph& g, int patches, int64_t element_bytes, bool stream_input = false);

// All of the above, in order.
void run_graph_passes(Graph& g);

// Drops the ops flagged in `removed`, keeping the order of the rest.
void erase_ops(Graph& g, const std::vector<bool>& removed);

}  // namespace mcuflow::compiler
