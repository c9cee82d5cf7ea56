// The window's keys, without a display: one table (gui/state/shortcuts.h) that the key handler
// reads, the help overlay lists and docs/window.md prints.
#include <catch2/catch.hpp>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <set>
#include <string>

#include "gui/state/shortcuts.h"
#include "gui/state/strings.h"
#include "tests/support/test_helpers.h"

using namespace kvs;
using namespace kvs::gui;

namespace {

// Modifier bits that a binding taking `m` matches.
int mods_for(KeyMods m) {
    switch (m) {
        case KeyMods::Some:
            return GLFW_MOD_SHIFT;
        case KeyMods::Ctrl:
            return GLFW_MOD_CONTROL;
        default:
            return 0;
    }
}

KeyAction action_of(int key, int mods, bool typing = false) {
    const KeyBinding* b = binding_for(key, mods, typing);
    REQUIRE(b != nullptr);
    return b->action;
}

}  // namespace

TEST_CASE(
    "every binding of the shortcut table is reached, every action has a key, every row "
    "says its words in both languages",
    "[gui][keys]") {
    std::set<KeyAction> bound;
    for (const Shortcut& s : shortcuts()) {
        INFO(s.keys);
        CHECK(std::string(tr(s.what, Lang::Zh)) != s.what);  // a Chinese row for what it does
        for (const KeyBinding& b : s.bindings) {
            bound.insert(b.action);
            // No binding earlier in the table takes this one's presses.
            CHECK(binding_for(b.key, mods_for(b.mods), false) == &b);
            if (b.while_typing) CHECK(binding_for(b.key, mods_for(b.mods), true) == &b);
        }
    }
    for (int a = 0; a <= static_cast<int>(KeyAction::Back); ++a) {
        INFO("KeyAction " << a);
        CHECK(bound.count(static_cast<KeyAction>(a)) == 1);
    }
}

TEST_CASE("a key press finds the action the help says", "[gui][keys]") {
    CHECK(action_of(GLFW_KEY_SPACE, 0) == KeyAction::Step);
    CHECK(action_of(GLFW_KEY_RIGHT, 0) == KeyAction::Step);
    CHECK(action_of(GLFW_KEY_RIGHT, GLFW_MOD_SHIFT) == KeyAction::ScrubForward);
    CHECK(action_of(GLFW_KEY_LEFT, GLFW_MOD_SHIFT) == KeyAction::ScrubBack);
    CHECK(binding_for(GLFW_KEY_LEFT, 0, false) == nullptr);
    CHECK(action_of(GLFW_KEY_S, GLFW_MOD_CONTROL) == KeyAction::Screenshot);
    CHECK(action_of(GLFW_KEY_S, GLFW_MOD_SHIFT) == KeyAction::InsideStage);
    CHECK(action_of(GLFW_KEY_E, GLFW_MOD_CONTROL | GLFW_MOD_SHIFT) == KeyAction::Export);
    CHECK(binding_for(GLFW_KEY_P, GLFW_MOD_CONTROL, false) == nullptr);  // Ctrl+letter is not it
    CHECK(binding_for(GLFW_KEY_3, GLFW_MOD_SHIFT, false) == nullptr);
    const KeyBinding* three = binding_for(GLFW_KEY_3, 0, false);
    REQUIRE(three != nullptr);
    CHECK(three->action == KeyAction::Maximise);
    CHECK(std::string(three->panel) == "kv");
    CHECK(action_of(GLFW_KEY_0, GLFW_MOD_SHIFT) == KeyAction::Restore);
    CHECK(action_of(GLFW_KEY_ESCAPE, 0) == KeyAction::Back);
    // While a text field has the focus only F1, F5, Ctrl+S and Ctrl+E act.
    CHECK(action_of(GLFW_KEY_F1, 0, true) == KeyAction::Help);
    CHECK(action_of(GLFW_KEY_F5, 0, true) == KeyAction::Presenter);
    CHECK(action_of(GLFW_KEY_S, GLFW_MOD_CONTROL, true) == KeyAction::Screenshot);
    CHECK(binding_for(GLFW_KEY_P, 0, true) == nullptr);
    CHECK(binding_for(GLFW_KEY_ESCAPE, 0, true) == nullptr);
}

TEST_CASE("docs/window.md prints the shortcut table as the help shows it", "[gui][keys]") {
    const std::string doc = test::slurp(std::string(KVSCOPE_SOURCE_DIR) + "/docs/window.md");
    const std::string table = shortcuts_markdown();
    INFO("docs/window.md's key table, as it should read:\n" << table);
    CHECK(doc.find(table) != std::string::npos);
}
