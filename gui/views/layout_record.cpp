#include "gui/views/layout_record.h"

#include <nlohmann/json.hpp>

namespace kvs::gui {
namespace {

nlohmann::json rect(const Rect& r) {
    return {{"x", r.x}, {"y", r.y}, {"w", r.w}, {"h", r.h}};
}
nlohmann::json rgb(const Rgba& c) {
    return {c.r, c.g, c.b};
}

// Inside attention's record: the row shown, each session's row as drawn, the projection stage.
nlohmann::ordered_json explain_json(const ExplainRecord& x) {
    nlohmann::ordered_json e = {{"open", x.open},
                                {"session", x.session},
                                {"step", x.step},
                                {"layer", x.layer},
                                {"head", x.head},
                                {"row", x.row},
                                {"q_pos", x.q_pos},
                                {"n_keys", x.n_keys},
                                {"head_dim", x.head_dim},
                                {"phase", x.phase},
                                {"mode", x.mode},
                                {"why", x.why},
                                {"op", x.op},
                                {"op_layer", x.op_layer},
                                {"stage", x.stage},
                                {"sessions", x.sessions},
                                {"position", x.position},
                                {"drawn", nlohmann::json::array()}};
    for (const ExplainRowRecord& d : x.drawn)
        e["drawn"].push_back({{"session", d.session},
                              {"step", d.step},
                              {"position", d.position},
                              {"mask", d.mask},
                              {"raw", d.raw},
                              {"scaled", d.scaled},
                              {"masked", d.masked},
                              {"weights", d.weights},
                              {"key_labels", d.key_labels},
                              {"numbers", d.numbers},
                              {"matrix_rows", d.matrix_rows},
                              {"matrix_keys", d.matrix_keys},
                              {"matrix_first_position", d.matrix_first_position},
                              {"matrix_masked", d.matrix_masked},
                              {"matrix", d.matrix},
                              {"number_px", d.number_px}});
    const ProjectionRecord& pr = x.projection;
    e["projection"] = {{"stage", pr.stage},
                       {"why", pr.why},
                       {"weights_why", pr.weights_why},
                       {"x", pr.x},
                       {"x_norm", pr.x_norm},
                       {"q", pr.q},
                       {"k", pr.k},
                       {"v", pr.v},
                       {"q_rope", pr.q_rope},
                       {"k_rope", pr.k_rope},
                       {"q_angle", pr.q_angle},
                       {"k_angle", pr.k_angle},
                       {"x_mean", pr.x_mean},
                       {"x_rms", pr.x_rms},
                       {"q_len", pr.q_len},
                       {"q_rope_len", pr.q_rope_len},
                       {"k_len", pr.k_len},
                       {"k_rope_len", pr.k_rope_len},
                       {"cache_row", pr.cache_row},
                       {"keys_read", pr.keys_read},
                       {"read_cached", pr.read_cached},
                       {"read_new", pr.read_new},
                       {"read_recomputed", pr.read_recomputed},
                       {"strip_rows", pr.strip_rows},
                       {"strip_cols", pr.strip_cols},
                       {"strip_block", pr.strip_block},
                       {"strip_first_row", pr.strip_first_row},
                       {"number_px", pr.number_px}};
    return e;
}

// The Next token panel's stages and the map of the step, as drawn.
nlohmann::ordered_json sampling_json(const SamplingRecord& s) {
    return {{"drawn", s.drawn},
            {"preview", s.preview},
            {"step", s.step},
            {"temperature", s.temperature},
            {"top_k", s.top_k},
            {"top_p", s.top_p},
            {"coin", s.coin},
            {"drawn_id", s.drawn_id},
            {"ids", s.ids},
            {"logit", s.logit},
            {"scaled", s.scaled},
            {"tempered", s.tempered},
            {"top_k_p", s.top_k_p},
            {"final", s.final_p},
            {"rest", {s.rest_tempered, s.rest_top_k, s.rest_final}},
            {"columns", s.columns}};
}

nlohmann::ordered_json map_json(const MapRecord& m) {
    nlohmann::ordered_json j = {{"drawn", m.drawn},
                                {"step", m.step},
                                {"ran", m.ran},
                                {"columns", nlohmann::ordered_json::array()}};
    for (const MapColumnRecord& c : m.columns)
        j["columns"].push_back({{"layer", c.layer},
                                {"rect", rect(c.rect)},
                                {"cached_queries", c.cached_queries},
                                {"cached_needed", c.cached_needed},
                                {"kv_read", c.kv_read},
                                {"kv_written", c.kv_written},
                                {"uncached_queries", c.uncached_queries},
                                {"uncached_needed", c.uncached_needed},
                                {"kv_recomputed", c.kv_recomputed}});
    return j;
}

nlohmann::json plots_json(const std::vector<PlotRecord>& plots) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& pl : plots) {
        nlohmann::json series = nlohmann::json::object();
        for (const auto& [label, y] : pl.series) series[label] = y;
        nlohmann::json legend = nlohmann::json::array();
        for (const auto& [label, r] : pl.legend)
            legend.push_back({{"label", label}, {"rect", rect(r)}});
        out.push_back(
            {{"name", pl.name},
             {"x", pl.x},
             {"series", series},
             {"rect", {{"x", pl.rect.x}, {"y", pl.rect.y}, {"w", pl.rect.w}, {"h", pl.rect.h}}},
             {"log_y", pl.log_y},
             {"legend", legend}});
    }
    return out;
}

}  // namespace

OutputKind layout_json_output() {
    return json_output_keyed("layout JSON", "kvscope_layout");
}

std::string LayoutRecord::to_json(int indent) const {
    // kvscope_layout first, whatever the other keys' order: layout_json_output() knows an
    // earlier record by it.
    nlohmann::ordered_json j;
    j["kvscope_layout"] = 1;
    j["width"] = width;
    j["height"] = height;
    j["scale"] = {scale_x, scale_y};
    j["model"] = model;
    j["theme"] = theme;
    j["backend"] = backend;
    j["step"] = step;
    j["steps"] = steps;
    j["colours"] = {{"mask", rgb(mask)},
                    {"missing", rgb(missing)},
                    {"empty_row", rgb(empty_row)},
                    {"highlight", rgb(highlight)},
                    {"recomputed", rgb(recomputed)},
                    {"background", rgb(background)}};
    nlohmann::json p = nlohmann::json::object();
    for (const auto& [name, r] : panels) p[name] = rect(r);
    j["panels"] = p;
    j["arrangement"] = arrangement;
    j["heatmaps"] = nlohmann::json::array();
    for (const auto& h : heatmaps)
        j["heatmaps"].push_back({{"session", h.session},
                                 {"main", h.main},
                                 {"layer", h.layer},
                                 {"head", h.head},
                                 {"n", h.n},
                                 {"first", h.first},
                                 {"rect", rect(h.rect)},
                                 {"new_rows", {h.new_begin, h.new_end}},
                                 {"recomputed_rows", {h.recomputed_begin, h.recomputed_end}},
                                 {"weights_hidden", h.weights_hidden}});
    j["kv_grids"] = nlohmann::json::array();
    for (const auto& g : kv_grids)
        j["kv_grids"].push_back({{"session", g.session},
                                 {"layer", g.layer},
                                 {"columns", g.columns},
                                 {"rows", g.rows},
                                 {"rect", rect(g.rect)},
                                 {"cell", {g.cell_w, g.cell_h}},
                                 {"written", {g.written_begin, g.written_end}}});
    j["lang"] = lang;
    j["fonts"] = {
        {"dejavu", font_dejavu}, {"chinese", font_chinese}, {"missing_glyphs", missing_glyphs}};
    j["messages"] = messages;
    j["tokens"] = tokens;
    j["finish"] = finish;
    j["plots"] = plots_json(plots);
    j["next_tokens_shown"] = next_tokens_shown;
    j["sampling"] = sampling_json(sampling);
    j["map"] = map_json(map);
    j["texts"] = nlohmann::json::array();
    for (const auto& t : texts)
        j["texts"].push_back({{"panel", t.panel},
                              {"text", t.text},
                              {"rect", rect(t.rect)},
                              {"clip", rect(t.clip)},
                              {"clipped_x", t.clipped_x},
                              {"clipped_y", t.clipped_y},
                              {"scrolls_x", t.scrolls_x},
                              {"scrolls_y", t.scrolls_y},
                              {"overlay", t.overlay},
                              {"vertical", t.vertical}});
    if (lesson.number > 0)
        j["lesson"] = {{"number", lesson.number},
                       {"title", lesson.title},
                       {"step", lesson.step},
                       {"steps", lesson.steps},
                       {"step_title", lesson.step_title},
                       {"checks_passed", lesson.checks_passed},
                       {"checks_failed", lesson.checks_failed},
                       {"running", lesson.running},
                       {"shown_panel", lesson.shown_panel},
                       {"errors", lesson.errors},
                       {"ask",
                        {{"state", lesson.ask},
                         {"question", lesson.ask_question},
                         {"learner", lesson.ask_learner},
                         {"engine", lesson.ask_engine},
                         {"right", lesson.ask_right},
                         {"fits", lesson.ask_fits}}}};
    nlohmann::json cells = nlohmann::json::array();
    for (const auto& [block, r] : serving.table_cells)
        cells.push_back({{"block", block}, {"rect", rect(r)}});
    j["serving"] = {{"open", serving.open},
                    {"blocks", serving.blocks},
                    {"cols", serving.cols},
                    {"block_size", serving.block_size},
                    {"grid", rect(serving.grid)},
                    {"cell", serving.cell},
                    {"shot", serving.shot},
                    {"shots", serving.shots},
                    {"used_blocks", serving.used_blocks},
                    {"multi_holder_blocks", serving.multi_holder_blocks},
                    {"cached_free_blocks", serving.cached_free_blocks},
                    {"cached_blocks_found", serving.cached_blocks_found},
                    {"prompt_chunks", serving.prompt_chunks},
                    {"budget", serving.budget},
                    {"prefix_cache", serving.prefix_cache},
                    {"let_go_entries", serving.let_go_entries},
                    {"tables", rect(serving.tables)},
                    {"table_cells", cells},
                    {"contiguous_blocks", serving.contiguous_blocks},
                    {"prefill_rows", serving.prefill_rows},
                    {"decode_rows", serving.decode_rows},
                    {"states", serving.states}};
    j["explain"] = explain_json(explain);
    // Token pieces and messages may hold any bytes: replace what is not UTF-8 rather than throw.
    return j.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace kvs::gui
