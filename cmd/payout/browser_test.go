package main_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payout/payout/batch/report/reporttest"
)

// measureScript writes into the page what a person at the window would see overflow: the
// document's width, every scrolling box's content and visible widths, and the cells whose text
// must stay whole (codes, numbers) but is wider than the cell.
const measureScript = `<script>
(function () {
  var boxes = [], cut = [];
  document.querySelectorAll(".scroll").forEach(function (e) { boxes.push(e.scrollWidth + "/" + e.clientWidth); });
  document.querySelectorAll("td.code, td.num").forEach(function (e) { if (e.scrollWidth > e.clientWidth) cut.push(e.textContent); });
  var out = document.createElement("pre");
  out.id = "measured";
  out.textContent = "document=" + document.documentElement.scrollWidth + " boxes=" + boxes.join(",") + " cut=" + cut.length + ":" + cut.join("|");
  document.body.appendChild(out);
})();
</script>`

// chromium runs headless Chromium on page at a 1280x900 window with extra flags, in a profile of
// its own that nothing outside the test sees, and returns its standard output.
func chromium(t *testing.T, browser, page string, flags ...string) string {
	t.Helper()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--window-size=1280,900"}, flags...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, append(args, "file://"+page)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %s: %v", filepath.Base(page), err)
	}
	return string(out)
}

// checkFits1280 opens a report at 1280 px: the document is no wider than the window, no table
// scrolls sideways in its box, and no code or number is cut. It also takes a screenshot.
func checkFits1280(t *testing.T, browser, report string) {
	t.Helper()
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	measured := filepath.Join(dir, "measured.html")
	page := strings.Replace(string(data), "</body>", measureScript+"</body>", 1)
	if err := os.WriteFile(measured, []byte(page), 0o600); err != nil {
		t.Fatal(err)
	}
	dom := chromium(t, browser, measured, "--dump-dom")
	m := regexp.MustCompile(`document=(\d+) boxes=([\d/,]*) cut=(\d+):([^<]*)`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("%s: the page did not report its widths:\n%.2000s", filepath.Base(report), dom)
	}
	name := filepath.Base(report)
	if width, _ := strconv.Atoi(m[1]); width > 1280 {
		t.Errorf("%s: the document is %d px wide in a 1280 px window", name, width)
	}
	for _, box := range strings.Split(m[2], ",") {
		content, visible, _ := strings.Cut(box, "/")
		c, _ := strconv.Atoi(content)
		v, _ := strconv.Atoi(visible)
		if c > v {
			t.Errorf("%s: a table is %d px wide in a %d px box: part of it is off-screen", name, c, v)
		}
	}
	if m[3] != "0" {
		t.Errorf("%s: %s code or number cell(s) wider than their column: %s", name, m[3], m[4])
	}
	shot := filepath.Join(dir, strings.TrimSuffix(name, ".html")+".png")
	chromium(t, browser, report, "--screenshot="+shot)
	if info, err := os.Stat(shot); err != nil || info.Size() == 0 {
		t.Errorf("%s: no screenshot (%v)", name, err)
	}
}

// TestCommandReportsFitA1280PixelWindow pays a file with long names, long bank names, a
// failure, rejected rows and a name the bank holds otherwise through the sandbox and the callback
// receiver, reconciles it, and opens both HTML reports in headless Chromium at 1280 px.
func TestCommandReportsFitA1280PixelWindow(t *testing.T) {
	t.Parallel()
	browser := reporttest.NeedTool(t, "chromium", "chromium", "chromium-browser")
	u := newUser(t, newSandbox(t))
	secrets := []string{"PAYOUT_AUTH_TOKEN=wide-token", "PAYOUT_HASH_KEY=wide-hash-key-0123456789"}
	receiver := startServer(t, u, secrets, "callbacks", "--listen", "127.0.0.1:0")
	service := startServer(t, u, secrets, "sandbox", "--listen", "127.0.0.1:0", "--settle-after", "1s",
		"--display-name", "WIDE-2026-11-000002=SOMEONE ELSE ENTIRELY BINTI ABDUL RAHMAN")
	u.env = append(u.env, secrets...)
	u.env = append(u.env, "PAYOUT_BASE_URL="+strings.TrimSuffix(service, "/"), "PAYOUT_CALLBACK_URL="+receiver)
	// Providers 8, 15 and 16 have the sandbox's longest names; an account ending in 000 fails.
	csv := "external_invoice_ref,recipient_reference,payout_service_id,third_party_account_no,amount,payment_description\n" +
		"WIDE-2026-11-000001,Nur Syafiqah Aisyah binti Mohd Khairul Anuar Abdullah,8,15123456789012345678,12345.67,Gaji November 2026\n" +
		"WIDE-2026-11-000002,Muthukumarasamy a/l Subramaniam Ramasamy Pillai,15,861234567890,99999.99,Gaji November 2026\n" +
		"WIDE-2026-11-000003,Tan Sri Dato' Seri Lim Kok Wing Chong Wei Ming,16,151234567000,1250.00,Gaji November 2026\n" +
		"WIDE-2026-11-000004,Ahmad Faizal bin Ismail,99,000181590832,6347.10,Gaji November 2026\n" +
		"WIDE-2026-11-000005,Chong Wei,3,12345,1.234,Gaji November 2026\n"
	if err := os.WriteFile(filepath.Join(u.dir, "wide.csv"), []byte(csv), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := u.run("run", "--allow-partial", "wide.csv")
	if code != 4 {
		t.Fatalf("run exit %d, want 4 (rows rejected and failed): %s %s", code, out, errOut)
	}
	runID := regexp.MustCompile(`run (\S+) of wide.csv`).FindStringSubmatch(out)
	if runID == nil {
		t.Fatalf("run printed no run id: %s", out)
	}
	// The name check comes with the settled payout's callback.
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if status, _, _ := u.run("status", "WIDE-2026-11-000002"); strings.Contains(status, "MISMATCH") {
			break
		}
	}
	if out, errOut, code := u.run("reconcile", "--run", runID[1]); code != 0 && code != 4 {
		t.Fatalf("reconcile exit %d: %s %s", code, out, errOut)
	}
	// Each page must hold the long texts, or the test would not check how they wrap.
	for pattern, want := range map[string]string{
		"wide.*.report.html": "Bank Rakyat (Bank Kerjasama Rakyat Malaysia Berhad)",
		"reconcile.*.html":   "SOMEONE ELSE ENTIRELY BINTI ABDUL RAHMAN (name mismatch)",
	} {
		pages, err := filepath.Glob(filepath.Join(u.dir, "reports", pattern))
		if err != nil || len(pages) != 1 {
			t.Fatalf("reports %s: %v (%v)", pattern, pages, err)
		}
		page, _ := os.ReadFile(pages[0])
		for _, text := range []string{want, "Nur Syafiqah Aisyah binti Mohd Khairul Anuar Abdullah", "account number must be digits"} {
			if !strings.Contains(string(page), text) {
				t.Errorf("%s lacks %q", filepath.Base(pages[0]), text)
			}
		}
		checkFits1280(t, browser, pages[0])
	}
}
