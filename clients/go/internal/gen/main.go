// Command gen writes the promptd client's typed wrappers (methods.go) and types (types.go) from
// the server's OpenRPC document. It runs through `go generate` in the client's directory; a test
// in this package fails when the committed files differ from what it would write.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

// Where the document and the package are, from the package directory go generate runs in.
const (
	defaultSpec = "../../../protocol/openrpc.json"
	defaultDir  = "."
)

func main() {
	spec := flag.String("spec", defaultSpec, "the OpenRPC document")
	dir := flag.String("dir", defaultDir, "the client package directory")
	flag.Parse()
	files, err := generateFor(*spec, *dir)
	if err == nil {
		for _, name := range sortedKeys(files) {
			if err = os.WriteFile(filepath.Join(*dir, name), files[name], 0o644); err != nil {
				break
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// generateFor reads the document and the package's hand-written names, and returns the files.
func generateFor(specPath, dir string) (map[string][]byte, error) {
	spec, err := os.ReadFile(specPath)
	if err != nil {
		return nil, err
	}
	names, methods, err := handWritten(dir, map[string]bool{TypesFile: true, MethodsFile: true})
	if err != nil {
		return nil, err
	}
	return Generate(spec, names, methods)
}
