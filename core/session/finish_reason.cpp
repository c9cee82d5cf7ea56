#include "core/session/finish_reason.h"

namespace kvs {

const char* finish_reason_name(FinishReason r) {
    switch (r) {
        case FinishReason::None:
            return "running";
        case FinishReason::EndToken:
            return "end token";
        case FinishReason::ContextFull:
            return "context full";
        case FinishReason::LengthLimit:
            return "length limit";
    }
    return "running";
}

FinishReason stop_rule(bool chose_end_token, int tokens, int seq_len, int generated,
                       int max_new_tokens) {
    if (chose_end_token) return FinishReason::EndToken;
    if (tokens > seq_len) return FinishReason::ContextFull;
    if (max_new_tokens > 0 && generated >= max_new_tokens) return FinishReason::LengthLimit;
    return FinishReason::None;
}

}  // namespace kvs
