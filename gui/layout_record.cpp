#include "gui/layout_record.h"

#include <nlohmann/json.hpp>

namespace kvs::gui {
namespace {

nlohmann::json rect(const Rect& r) {
    return {{"x", r.x}, {"y", r.y}, {"w", r.w}, {"h", r.h}};
}
nlohmann::json rgb(const Rgba& c) {
    return {c.r, c.g, c.b};
}

}  // namespace

std::string LayoutRecord::to_json() const {
    nlohmann::json j;
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
                    {"background", rgb(background)}};
    nlohmann::json p = nlohmann::json::object();
    for (const auto& [name, r] : panels) p[name] = rect(r);
    j["panels"] = p;
    j["heatmaps"] = nlohmann::json::array();
    for (const auto& h : heatmaps)
        j["heatmaps"].push_back({{"session", h.session},
                                 {"main", h.main},
                                 {"layer", h.layer},
                                 {"head", h.head},
                                 {"n", h.n},
                                 {"first", h.first},
                                 {"rect", rect(h.rect)},
                                 {"new_rows", {h.new_begin, h.new_end}}});
    j["kv_grids"] = nlohmann::json::array();
    for (const auto& g : kv_grids)
        j["kv_grids"].push_back({{"session", g.session},
                                 {"layer", g.layer},
                                 {"columns", g.columns},
                                 {"rows", g.rows},
                                 {"rect", rect(g.rect)},
                                 {"cell", {g.cell_w, g.cell_h}},
                                 {"written", {g.written_begin, g.written_end}}});
    return j.dump(1);
}

}  // namespace kvs::gui
