/// Small Dear ImGui helpers and the palette shared by all panels.
#pragma once
#include <imgui.h>

namespace ps {
namespace ui {

inline const ImVec4 kAccent{0.36f, 0.66f, 0.96f, 1.f};
inline const ImVec4 kMuted{0.60f, 0.64f, 0.72f, 1.f};
inline const ImVec4 kWarn{1.00f, 0.66f, 0.30f, 1.f};
inline const ImVec4 kError{1.00f, 0.42f, 0.40f, 1.f};
inline const ImVec4 kGood{0.45f, 0.85f, 0.55f, 1.f};

/// A "(?)" after the last item that shows `text` as a tooltip.
inline void help_marker(const char* text) {
  ImGui::SameLine();
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 28.f);
    ImGui::TextUnformatted(text);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
}

/// A muted heading inside a panel section.
inline void section_label(const char* text) {
  ImGui::Spacing();
  ImGui::PushStyleColor(ImGuiCol_Text, kMuted);
  ImGui::TextUnformatted(text);
  ImGui::PopStyleColor();
}

}  // namespace ui
}  // namespace ps
