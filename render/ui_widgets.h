/// Small Dear ImGui helpers and the palette shared by all panels.
#pragma once
#include <imgui.h>

#include <cstdarg>
#include <string>

#include "render/cpu/layout.h"

namespace ps {
namespace ui {

/// An RGB colour (0..1) with alpha as ImGui's packed colour.
inline ImU32 col32(const float c[3], float a = 1.f) {
  auto q = [](float v) {
    return static_cast<int>(v <= 0.f ? 0.f : v >= 1.f ? 255.f : v * 255.f + 0.5f);
  };
  return IM_COL32(q(c[0]), q(c[1]), q(c[2]), q(a));
}

inline const ImVec4 kAccent{0.36f, 0.66f, 0.96f, 1.f};
inline const ImVec4 kMuted{0.60f, 0.64f, 0.72f, 1.f};
inline const ImVec4 kWarn{1.00f, 0.66f, 0.30f, 1.f};
inline const ImVec4 kError{1.00f, 0.42f, 0.40f, 1.f};
inline const ImVec4 kGood{0.45f, 0.85f, 0.55f, 1.f};

/// `text` cut in the middle to `max_w` px of the current font (render/cpu/layout.h).
inline std::string elide_middle(const std::string& text, float max_w) {
  return ps::elide_middle(text, max_w,
                          [](const std::string& t) { return ImGui::CalcTextSize(t.c_str()).x; });
}

/// `text` wrapped to the available width at spaces only (render/cpu/layout.h: ImGui's
/// TextWrapped also breaks after a full stop, "0.7 s" becoming "0." and "7 s").
inline void text_wrapped_words(const std::string& text) {
  const float w = ImGui::GetContentRegionAvail().x;
  const std::string lines = ps::wrap_at_spaces(
      text, w, [](const std::string& t) { return ImGui::CalcTextSize(t.c_str()).x; });
  ImGui::TextUnformatted(lines.c_str());
}

/// True when the panel is too narrow for a widget with its label beside it (under
/// about 15 characters of the font: projector mode's 256-px panels at 1280x720).
inline bool narrow_panel() {
  return ImGui::GetContentRegionAvail().x < 15.f * ImGui::GetFontSize();
}

/// A field's label: in a narrow panel on its own line above the widget, which then takes the
/// whole width (returns "##" + label as the widget's id); else the label stays beside it.
inline std::string field_label(const char* label) {
  if (!narrow_panel()) return label;
  ImGui::TextDisabled("%s", label);
  ImGui::SetNextItemWidth(-FLT_MIN);
  return std::string("##") + label;
}

/// A tooltip with `text` wrapped at about 28 characters' width of the font
/// (SetTooltip draws one line, which runs off a 1280-wide window).
inline void wrapped_tooltip(const char* text) {
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 28.f);
  ImGui::TextUnformatted(text);
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

/// A "(?)" after the last item that shows `text` as a tooltip.
inline void help_marker(const char* text) {
  ImGui::SameLine();
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered()) wrapped_tooltip(text);
}

/// Begins a fixed, undecorated window (the strips under the scene) at `pos`
/// with `size` and `padding`. When it returns false the window is already
/// closed again; after true, end_strip() closes it.
inline bool begin_strip(const char* id, ImVec2 pos, ImVec2 size, ImVec2 padding) {
  ImGui::SetNextWindowPos(pos, ImGuiCond_Always);
  ImGui::SetNextWindowSize(size, ImGuiCond_Always);
  const ImGuiWindowFlags flags =
      ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
      ImGuiWindowFlags_NoScrollWithMouse | ImGuiWindowFlags_NoBringToFrontOnFocus;
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, padding);
  if (ImGui::Begin(id, nullptr, flags)) return true;
  ImGui::End();
  ImGui::PopStyleVar();
  return false;
}
inline void end_strip() {
  ImGui::End();
  ImGui::PopStyleVar();
}

/// A muted heading inside a panel section.
inline void section_label(const char* text) {
  ImGui::Spacing();
  ImGui::PushStyleColor(ImGuiCol_Text, kMuted);
  ImGui::TextUnformatted(text);
  ImGui::PopStyleColor();
}

/// The monospaced font the window loads second (values in property tables), if any.
inline ImFont* mono_font() {
  ImFontAtlas* a = ImGui::GetIO().Fonts;
  return a->Fonts.Size > 1 ? a->Fonts[1] : nullptr;
}

/// The large font the window loads third (scene titles, lesson headings), if any.
inline ImFont* title_font() {
  ImFontAtlas* a = ImGui::GetIO().Fonts;
  return a->Fonts.Size > 2 ? a->Fonts[2] : nullptr;
}

/// Starts a two-column "label  value" property table; end with ImGui::EndTable().
inline bool begin_props(const char* id) {
  if (!ImGui::BeginTable(id, 2, ImGuiTableFlags_SizingStretchProp)) return false;
  ImGui::TableSetupColumn("k", ImGuiTableColumnFlags_WidthFixed, ImGui::GetFontSize() * 6.5f);
  ImGui::TableSetupColumn("v", ImGuiTableColumnFlags_WidthStretch);
  return true;
}

/// One row of a property table: a muted label and a monospaced value.
inline void prop(const char* label, const char* fmt, ...) IM_FMTARGS(2);
inline void prop(const char* label, const char* fmt, ...) {
  ImGui::TableNextRow();
  ImGui::TableSetColumnIndex(0);
  ImGui::PushStyleColor(ImGuiCol_Text, kMuted);
  ImGui::TextUnformatted(label);
  ImGui::PopStyleColor();
  ImGui::TableSetColumnIndex(1);
  ImFont* mono = mono_font();
  if (mono) ImGui::PushFont(mono);
  va_list ap;
  va_start(ap, fmt);
  ImGui::TextV(fmt, ap);
  va_end(ap);
  if (mono) ImGui::PopFont();
}

}  // namespace ui
}  // namespace ps
