package promptd

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// ModulePath is the client module's path: go-gettable from the monorepo once published
// (github.com/promptd/promptd, the client under clients/go).
const modulePath = "github.com/promptd/promptd/clients/go"

// goTool is the go command the tests themselves run under, or a skip.
func goTool(t *testing.T) string {
	t.Helper()
	tool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	return tool
}

func runGo(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(goTool(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func TestEveryImportPathEndsInItsPackageName(t *testing.T) {
	out := runGo(t, "..", nil, "list", "-f", "{{.ImportPath}} {{.Name}}", "./...")
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		importPath, name, _ := strings.Cut(line, " ")
		if !strings.HasPrefix(importPath, modulePath+"/") {
			t.Errorf("%s is not under the module path %s", importPath, modulePath)
		}
		if name != "main" && path.Base(importPath) != name {
			t.Errorf("package %s is imported as %s: every import would need an alias", name, importPath)
		}
	}
}

// A new user's module: it requires the client through a replace pointing at this checkout,
// imports it without an alias, and runs testdata/host against the real sidecar. These are the
// commands README.md gives.
func TestAHostModuleRequiringTheClientByReplaceBuildsAndRuns(t *testing.T) {
	clientDir, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(clientDir, "testdata", "host", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	offline := []string{"GOPROXY=off", "GOFLAGS=-mod=mod", "GOWORK=off"}
	runGo(t, dir, offline, "mod", "init", "example.com/host")
	runGo(t, dir, offline, "mod", "edit", "-replace", modulePath+"="+clientDir)
	runGo(t, dir, offline, "mod", "tidy")
	runGo(t, dir, offline, "vet", ".")
	runGo(t, dir, offline, "build", "-o", "host", ".")
	cmd := exec.Command(filepath.Join(dir, "host"))
	cmd.Env = append(os.Environ(), "PROMPTD="+sidecar(t))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the host failed: %v\n%s", err, out)
	}
	for _, want := range []string{"system prompt: ", "user message: \"hello", "closed at exit"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the host's output lacks %q:\n%s", want, out)
		}
	}
}
