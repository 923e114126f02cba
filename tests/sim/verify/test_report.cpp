// The verification framework: check verdicts, case verdicts, SVG plots and the report files.
#include <catch2/catch.hpp>

#include <unistd.h>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <set>
#include <sstream>

#include "sim/verify/verify.h"

namespace fs = std::filesystem;
using namespace ps::verify;

namespace {

Check make_check(double measured, double reference, double tolerance, Compare cmp) {
  Check c;
  c.quantity = "q";
  c.measured = measured;
  c.reference = reference;
  c.tolerance = tolerance;
  c.compare = cmp;
  c.pass = true;  // evaluate() must overwrite a stale flag
  c.evaluate();
  return c;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + what.size())) ++n;
  return n;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// A throwaway case for the tests only (never registered in the product).
CaseSpec throwaway_case(bool fail) {
  CaseSpec spec;
  spec.id = fail ? "test.throwaway_miss" : "test.throwaway_pass";
  spec.group = "Test group";
  spec.in_quick = true;
  spec.run = [fail](const Options&) {
    CaseResult r;
    r.id = fail ? "test.throwaway_miss" : "test.throwaway_pass";
    r.title = "Free fall <distance> & time";
    r.model = "x = g t^2 / 2";
    r.reference = "Galileo (1638)";
    r.setup = "one point, g = 9.81";
    Check c;
    c.quantity = "distance after 1 s";
    c.measured = fail ? 5.5 : 4.905;
    c.reference = 4.905;
    c.tolerance = 0.01;
    c.compare = Compare::NearRel;
    c.unit = "m";
    c.evaluate();
    r.checks.push_back(c);
    Plot p;
    p.title = "distance";
    p.xlabel = "t (s)";
    p.ylabel = "x (m)";
    Series ref{"reference", {0, 0.5, 1}, {0, 1.226, 4.905}, false, true};
    Series meas{"measured", {0, 0.5, 1}, {0, 1.2, fail ? 5.5 : 4.9}, true, false};
    p.series = {ref, meas};
    r.plots.push_back(p);
    r.notes = "notes with <b>markup</b>";
    return r;
  };
  return spec;
}

}  // namespace

TEST_CASE("Check::evaluate compares as its kind says", "[verify]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  SECTION("Near: absolute tolerance") {
    CHECK(make_check(1.05, 1.0, 0.1, Compare::Near).pass);
    CHECK(make_check(0.95, 1.0, 0.1, Compare::Near).pass);
    CHECK_FALSE(make_check(1.2, 1.0, 0.1, Compare::Near).pass);
    CHECK_FALSE(make_check(0.8, 1.0, 0.1, Compare::Near).pass);
    CHECK(make_check(0.05, 0.0, 0.1, Compare::Near).pass);
  }
  SECTION("NearRel: tolerance relative to |reference|") {
    CHECK(make_check(104.0, 100.0, 0.05, Compare::NearRel).pass);
    CHECK_FALSE(make_check(106.0, 100.0, 0.05, Compare::NearRel).pass);
    CHECK(make_check(-96.0, -100.0, 0.05, Compare::NearRel).pass);  // |reference| for negatives
    CHECK_FALSE(make_check(-90.0, -100.0, 0.05, Compare::NearRel).pass);
    CHECK_FALSE(make_check(1e-9, 0.0, 0.05, Compare::NearRel).pass);  // zero reference: exact only
  }
  SECTION("Below and Above are bounds; the tolerance is unused") {
    CHECK(make_check(0.5, 1.0, 0.0, Compare::Below).pass);
    CHECK(make_check(1.0, 1.0, 0.0, Compare::Below).pass);
    CHECK_FALSE(make_check(1.01, 1.0, 10.0, Compare::Below).pass);
    CHECK(make_check(2.0, 1.0, 0.0, Compare::Above).pass);
    CHECK_FALSE(make_check(0.99, 1.0, 10.0, Compare::Above).pass);
  }
  SECTION("A non-finite measurement always fails") {
    for (Compare cmp : {Compare::Near, Compare::NearRel, Compare::Below, Compare::Above}) {
      CHECK_FALSE(make_check(nan, 1.0, 1e9, cmp).pass);
      CHECK_FALSE(make_check(inf, 1.0, 1e9, cmp).pass);
      CHECK_FALSE(make_check(-inf, 1.0, 1e9, cmp).pass);
    }
    CHECK_FALSE(make_check(-inf, 1.0, 0.0, Compare::Below).pass);  // would satisfy the bound
    CHECK_FALSE(make_check(inf, 1.0, 0.0, Compare::Above).pass);
  }
}

TEST_CASE("CaseResult::passed needs every check and no error", "[verify]") {
  CaseResult r;
  r.checks.push_back(make_check(1.0, 1.0, 0.1, Compare::Near));
  r.checks.push_back(make_check(0.5, 1.0, 0.0, Compare::Below));
  CHECK(r.passed());
  r.error = "blow-up at step 12";
  CHECK_FALSE(r.passed());
  r.error.clear();
  r.checks.push_back(make_check(3.0, 1.0, 0.1, Compare::Near));
  CHECK_FALSE(r.passed());
  // The throwaway cases through their spec.
  CHECK(throwaway_case(false).run(Options{}).passed());
  CHECK_FALSE(throwaway_case(true).run(Options{}).passed());
}

TEST_CASE("all_cases joins the groups in report order with unique ids", "[verify]") {
  std::vector<CaseSpec> all = all_cases();
  std::vector<CaseSpec> a = mpm_cases(), m = mpm_material_cases(), b = mpm_flow_cases(),
                        h = heat_cases(), c = dem_cases(), r = rigid_cases(), s = scene_cases();
  REQUIRE(all.size() == a.size() + m.size() + b.size() + h.size() + c.size() + r.size() + s.size());
  size_t k = 0;
  for (const auto* g : {&a, &m, &b, &h, &c, &r, &s})
    for (const auto& s : *g) CHECK(all[k++].id == s.id);
  std::set<std::string> ids;
  for (const auto& spec : all) {
    CHECK(ids.insert(spec.id).second);
    CHECK(static_cast<bool>(spec.run));
  }
}

TEST_CASE("plot_svg draws one path per drawn series, skips NaN/inf, escapes text", "[verify]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  Plot p;
  p.title = "E <kinetic> & potential";
  p.xlabel = "t & s";
  p.ylabel = "energy <J>";
  p.series.push_back({"measured <a&b>", {0, 1, 2, 3, 4}, {1, nan, 3, inf, 5}, true, false});
  p.series.push_back({"reference", {0, 1, 2, 3, 4}, {1, 2, nan, 4, 5}, false, true});
  p.series.push_back({"empty", {}, {}, false, false});
  p.series.push_back({"plain line", {0, 4}, {2, 2}, false, false});
  const std::string svg = plot_svg(p);
  REQUIRE(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find("</svg>") != std::string::npos);
  const std::string l = lower(svg);
  CHECK(l.find("nan") == std::string::npos);
  CHECK(l.find("inf") == std::string::npos);
  CHECK(count(svg, "<path") == 3);  // the empty series draws nothing
  CHECK(count(svg, "<polyline") == 0);
  CHECK(svg.find("stroke-dasharray") != std::string::npos);  // the reference is dashed
  CHECK(svg.find("E &lt;kinetic&gt; &amp; potential") != std::string::npos);
  CHECK(svg.find("measured &lt;a&amp;b&gt;") != std::string::npos);
  CHECK(svg.find("t &amp; s") != std::string::npos);
  CHECK(svg.find("<a&b>") == std::string::npos);
  CHECK(svg.find("<kinetic>") == std::string::npos);
  // Every series appears in the legend, the empty one marked.
  CHECK(svg.find(">reference<") != std::string::npos);
  CHECK(svg.find("empty (no data)") != std::string::npos);
  // Distinct colours for the drawn series.
  std::regex stroke_re(
      "<path d=\"[^\"]*\" fill=\"(#[0-9A-Fa-f]{6}|none)\"(?: stroke=\"(#[0-9A-Fa-f]{6})\")?");
  std::set<std::string> colours;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), stroke_re);
       it != std::sregex_iterator(); ++it)
    colours.insert((*it)[1] == "none" ? (*it)[2].str() : (*it)[1].str());
  CHECK(colours.size() == 3);
}

TEST_CASE("plot_svg handles empty, single-point, constant and log data", "[verify]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  SECTION("no series at all") {
    Plot p;
    p.title = "nothing";
    std::string svg = plot_svg(p);
    CHECK(count(svg, "<path") == 0);
    CHECK(svg.find("no data") != std::string::npos);
    CHECK(lower(svg).find("nan") == std::string::npos);
  }
  SECTION("only non-finite values") {
    Plot p;
    p.series.push_back({"bad", {nan, 1}, {1, nan}, false, false});
    std::string svg = plot_svg(p);
    CHECK(count(svg, "<path") == 0);
    CHECK(lower(svg).find("nan") == std::string::npos);
  }
  SECTION("a single point and constant data") {
    Plot p;
    p.series.push_back({"one", {3}, {7}, true, false});
    p.series.push_back({"flat", {1, 2, 3}, {7, 7, 7}, false, false});
    std::string svg = plot_svg(p);
    CHECK(count(svg, "<path") == 2);
    CHECK(lower(svg).find("nan") == std::string::npos);
    CHECK(lower(svg).find("inf") == std::string::npos);
    // Tick labels around the constant value.
    CHECK(svg.find(">7<") != std::string::npos);
  }
  SECTION("log y skips values <= 0 and labels decades") {
    Plot p;
    p.log_y = true;
    p.series.push_back({"decay", {0, 1, 2, 3, 4}, {1, 0.1, 0.0, -1, 1e-4}, false, false});
    std::string svg = plot_svg(p);
    CHECK(count(svg, "<path") == 1);
    CHECK(lower(svg).find("nan") == std::string::npos);
    CHECK(lower(svg).find("inf") == std::string::npos);
    CHECK(svg.find(">0.01<") != std::string::npos);
    CHECK(svg.find(">1e-4<") != std::string::npos);
    CHECK(svg.find("2 values not shown") != std::string::npos);
  }
}

TEST_CASE("write_report writes a self-contained report.html and summary.md", "[verify]") {
  fs::path dir =
      fs::temp_directory_path() /
      ("ps_verify_report_" + std::to_string(getpid()) + "_" + std::to_string(std::rand())) /
      "nested";
  fs::remove_all(dir.parent_path());
  std::vector<CaseResult> results;
  results.push_back(throwaway_case(false).run(Options{}));
  results.push_back(throwaway_case(true).run(Options{}));
  results.back().must_pass = false;
  CaseResult err;
  err.id = "test.throwaway_error";
  err.title = "raises";
  err.error = "blow-up: particle 12 at step 40 <script>alert(1)</script>";
  results.push_back(err);
  for (auto& r : results) r.group = "Test group";
  std::string msg;
  Options opt;
  opt.quick = true;
  opt.threads = 2;
  REQUIRE(write_report(dir.string(), results, opt, &msg));
  CHECK(msg.empty());
  REQUIRE(fs::exists(dir / "report.html"));
  REQUIRE(fs::exists(dir / "summary.md"));
  const std::string html = slurp(dir / "report.html");
  const std::string md = slurp(dir / "summary.md");
  for (const char* id : {"test.throwaway_pass", "test.throwaway_miss", "test.throwaway_error"}) {
    CHECK(html.find(id) != std::string::npos);
    CHECK(md.find(id) != std::string::npos);
  }
  CHECK(html.find("Particle Sandbox — verification report") != std::string::npos);
  CHECK(html.find(">PASS<") != std::string::npos);
  CHECK(html.find(">MISS<") != std::string::npos);
  CHECK(html.find(">ERROR<") != std::string::npos);
  CHECK(html.find("informative") != std::string::npos);
  CHECK(html.find("must-pass") != std::string::npos);
  CHECK(html.find("± 1 %") != std::string::npos);
  CHECK(html.find("Galileo (1638)") != std::string::npos);
  CHECK(html.find("Test group") != std::string::npos);
  CHECK(count(html, "<svg") == 2);
  CHECK(lower(html).find("<script") == std::string::npos);
  CHECK(html.find("&lt;script&gt;") != std::string::npos);
  CHECK(html.find("Free fall &lt;distance&gt; &amp; time") != std::string::npos);
  // Self-contained: no external resources.
  CHECK(html.find("<link") == std::string::npos);
  CHECK(html.find("src=") == std::string::npos);
  CHECK(html.find("@import") == std::string::npos);
  CHECK(html.find("threads: 2") != std::string::npos);
  CHECK(html.find("quick") != std::string::npos);
  // The error case is must-pass (default): the banner says one did not pass.
  CHECK(html.find("1 must-pass case did not pass") != std::string::npos);
  CHECK(md.find("| `test.throwaway_miss` | Test group | MISS | informative |") !=
        std::string::npos);
  CHECK(md.find("| `test.throwaway_error` | Test group | ERROR | must-pass |") !=
        std::string::npos);
  CHECK(md.find("| distance after 1 s | 5.5 m | 4.905 m | ± 1 % |") != std::string::npos);
  fs::remove_all(dir.parent_path());
}

TEST_CASE("write_report reports a folder it cannot create", "[verify]") {
  fs::path file = fs::temp_directory_path() / ("ps_verify_blocker_" + std::to_string(getpid()));
  { std::ofstream(file) << "x"; }
  std::string msg;
  CHECK_FALSE(write_report((file / "sub").string(), {}, Options{}, &msg));
  CHECK_FALSE(msg.empty());
  fs::remove(file);
}

TEST_CASE("The report says where each case ran and counts the cases per backend",
          "[verify][backend]") {
  fs::path dir = fs::temp_directory_path() / ("ps_verify_ran_on_" + std::to_string(getpid()) + "_" +
                                              std::to_string(std::rand()));
  fs::remove_all(dir);
  std::vector<CaseResult> results;
  for (int k = 0; k < 4; ++k) {
    results.push_back(throwaway_case(false).run(Options{}));
    results.back().id = "test.case" + std::to_string(k);
    results.back().ran_on.requested = "cuda";
  }
  for (int k : {0, 1}) {
    results[k].ran_on.backend = "cuda";
    results[k].ran_on.device = "cuda (Test GPU)";
  }
  results[1].ran_on.fallback =
      "cuda (Test GPU) failed while stepping (out of memory); continuing on the CPU backend";
  results[2].ran_on.host = "a closed form <no world>";
  results[3].ran_on.backend = "cuda";
  results[3].ran_on.device = "cuda (Test GPU)";
  results[3].ran_on.host = "the reference solves";
  Options opt;
  opt.backend = "cuda";
  std::string msg;
  REQUIRE(write_report(dir.string(), results, opt, &msg));
  const std::string html = slurp(dir / "report.html");
  const std::string md = slurp(dir / "summary.md");
  const std::string tally =
      "2 cases on cuda (Test GPU), 1 on the cpu (each says why), 1 fell back from the device to the cpu";
  CHECK(html.find("Ran on: " + tally + ".") != std::string::npos);
  CHECK(md.find("Ran on: " + tally + ".") != std::string::npos);
  CHECK(html.find("<span>backend: cuda</span>") != std::string::npos);
  CHECK(md.find("- backend: cuda") != std::string::npos);
  // Per case, in the table and in its section.
  CHECK(count(html, "<dt>Ran on</dt>") == 4);
  CHECK(html.find("<dt>Ran on</dt><dd>cuda (Test GPU)</dd>") != std::string::npos);
  CHECK(html.find("<dt>Ran on</dt><dd>cpu — a closed form &lt;no world&gt;</dd>") !=
        std::string::npos);
  CHECK(html.find("cuda (Test GPU), fell back to the cpu: cuda (Test GPU) failed while stepping") !=
        std::string::npos);
  CHECK(html.find("<td class=\"kind\">cpu (see why)</td>") != std::string::npos);
  CHECK(md.find("| cuda (Test GPU) | Free fall") != std::string::npos);
  CHECK(md.find("| cuda (Test GPU), fell back to the cpu | Free fall") != std::string::npos);
  CHECK(md.find("| cuda (Test GPU) (part on the host) | Free fall") != std::string::npos);
  CHECK(md.find("\nRan on: cpu — a closed form <no world>\n") != std::string::npos);
  CHECK(md.find("\nRan on: cuda (Test GPU); on the host: the reference solves\n") !=
        std::string::npos);
  fs::remove_all(dir);
}
