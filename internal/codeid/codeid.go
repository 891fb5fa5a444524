// Package codeid names the code a program was built from, so that what a
// program derives from a run and keeps (scored answers, tables) is reused
// only by a program built from the same code.
//
// A program whose every module has a released version is named by its Go
// version and its modules' paths, versions and checksums
// (runtime/debug.ReadBuildInfo). A module built from a local directory (a
// checkout, a go.work workspace, a replace) has the version "(devel)"
// whatever its code, so it is named by its contents: every non-test .go
// file, go.mod and go.sum of its tree, and every file its go:embed
// directives name. Those modules are found from the source file names in
// the executable's line table, so a study in a module of its own counts
// as Bhasha's own code does.
package codeid

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"debug/macho"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
)

// ID names a program's code.
type ID struct {
	// Digest is a SHA-256 over what names the code, in hex; two programs
	// with equal digests were built from the same code.
	Digest string
	// How says what the digest covers, for a note: "released modules",
	// "sources of N local module(s)" or "the executable's own bytes" (a
	// development build whose sources could not be read: trimmed paths,
	// moved sources, an executable format without a Go line table that
	// this package reads); such a digest changes with every build.
	How string
}

// Short is the digest's first twelve hex digits.
func (id ID) Short() string { return id.Digest[:min(12, len(id.Digest))] }

// String is "<short digest> (<how>)".
func (id ID) String() string { return id.Short() + " (" + id.How + ")" }

// program memoizes Program.
var program = sync.OnceValues(func() (ID, error) {
	exe, err := os.Executable()
	if err != nil {
		return ID{}, fmt.Errorf("naming the program's code: %w", err)
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ofBytes(exe, "no build information")
	}
	// GoNB compiles a notebook's cells in $GONB_TMP_DIR, rewriting them
	// at each cell: left out, so that later cells reuse what the first
	// one stored.
	var skip []string
	if d := os.Getenv("GONB_TMP_DIR"); d != "" {
		skip = append(skip, d)
	}
	return Of(exe, bi, skip)
})

// Program is the ID of the running program (Of on its executable and
// build information, leaving out GoNB's directory $GONB_TMP_DIR),
// computed once a process: for a development build, one read of the
// executable's file table and of the local modules' sources.
func Program() (ID, error) { return program() }

// Of is the ID of the executable at exe built as bi says, leaving out the
// source files under the directories in skip. It returns an error only
// when neither the sources nor the executable can be read.
func Of(exe string, bi *debug.BuildInfo, skip []string) (ID, error) {
	if released(bi) {
		h := sha256.New()
		fmt.Fprintf(h, "go %s\n", bi.GoVersion)
		writeModule(h, &bi.Main)
		for _, d := range bi.Deps {
			writeModule(h, d)
		}
		return ID{Digest: hex.EncodeToString(h.Sum(nil)), How: "released modules"}, nil
	}
	files, err := sourceFiles(exe)
	if err == nil {
		var id ID
		if id, err = OfSources(bi.GoVersion, files, skip); err == nil {
			return id, nil
		}
	}
	return ofBytes(exe, err.Error())
}

// released reports whether every module of bi has a version of its own:
// none is "(devel)" and none is replaced by a directory.
func released(bi *debug.BuildInfo) bool {
	devel := func(m *debug.Module) bool {
		if m.Replace != nil {
			return m.Replace.Version == ""
		}
		return m.Version == "" || m.Version == "(devel)"
	}
	return !devel(&bi.Main) && !slices.ContainsFunc(bi.Deps, devel)
}

func writeModule(w io.Writer, m *debug.Module) {
	fmt.Fprintf(w, "mod %s %s %s\n", m.Path, m.Version, m.Sum)
	if m.Replace != nil {
		fmt.Fprintf(w, "=> %s %s %s\n", m.Replace.Path, m.Replace.Version, m.Replace.Sum)
	}
}

// ofBytes names the executable by its bytes (one SHA-256 pass over it),
// saying why its sources were not used.
func ofBytes(exe, why string) (ID, error) {
	f, err := os.Open(exe)
	if err != nil {
		return ID{}, fmt.Errorf("naming the program's code (%s): %w", why, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ID{}, fmt.Errorf("naming the program's code (%s): reading %s: %w", why, exe, err)
	}
	return ID{Digest: hex.EncodeToString(h.Sum(nil)), How: "the executable's own bytes: " + why}, nil
}

// sourceFiles lists the source file names of the Go line table of the
// ELF or Mach-O executable exe.
func sourceFiles(exe string) ([]string, error) {
	var section io.ReaderAt
	if f, err := elf.Open(exe); err == nil {
		defer f.Close()
		if s := f.Section(".gopclntab"); s != nil {
			section = s
		}
	} else if f, err := macho.Open(exe); err == nil {
		defer f.Close()
		if s := f.Section("__gopclntab"); s != nil {
			section = s
		}
	} else {
		return nil, fmt.Errorf("%s is neither an ELF nor a Mach-O executable", exe)
	}
	if section == nil {
		return nil, fmt.Errorf("%s has no Go line table", exe)
	}
	files, err := fileTable(section)
	if err != nil {
		return nil, fmt.Errorf("reading the line table of %s: %w", exe, err)
	}
	return files, nil
}

// fileTable lists the file names of the Go line table (of Go 1.18 or
// later, little-endian) tab, sorted, each once. It reads its header and
// its file table.
func fileTable(tab io.ReaderAt) ([]string, error) {
	// runtime.pcHeader: magic, 0, 0, instruction size, pointer size, then
	// words: the file table's offset the sixth, its end the seventh.
	h := make([]byte, 8+7*8)
	n, _ := tab.ReadAt(h, 0)
	if n < 8 || binary.LittleEndian.Uint32(h)&^1 != 0xfffffff0 || h[4]|h[5] != 0 || (h[7] != 4 && h[7] != 8) || n < 8+7*int(h[7]) {
		return nil, errors.New("a Go line table of an unknown version")
	}
	word := func(i int) uint64 {
		b := h[8+i*int(h[7]):]
		if h[7] == 4 {
			return uint64(binary.LittleEndian.Uint32(b))
		}
		return binary.LittleEndian.Uint64(b)
	}
	from, to := word(5), word(6)
	if from > to || to-from > 1<<30 {
		return nil, errors.New("its file table is out of bounds")
	}
	b := make([]byte, to-from)
	if _, err := tab.ReadAt(b, int64(from)); err != nil {
		return nil, fmt.Errorf("its file table: %w", err)
	}
	files := strings.FieldsFunc(string(b), func(r rune) bool { return r == 0 })
	slices.Sort(files)
	return slices.Compact(files), nil
}

// OfSources is the ID of a development build of Go version goVersion from
// the source files named (as an executable's line table names them),
// leaving out those under the directories in skip. The standard library
// (the files beside the one ending in /src/runtime/proc.go), the module
// cache (a directory named path@version) and generated names ("<…>") are
// named by the modules' versions elsewhere and left out, as are names
// with no directory (a test's generated _testmain.go). Every other file
// must be an absolute path on this machine: the tree of the module
// holding it (its nearest go.mod upwards) is hashed. It fails when a file
// is named by a relative path (a -trimpath build) or its module cannot be
// read.
func OfSources(goVersion string, files, skip []string) (ID, error) {
	skip = slices.Clone(skip)
	for i, d := range skip {
		skip[i] = filepath.Clean(d)
	}
	goroot := ""
	for _, f := range files {
		if strings.HasSuffix(filepath.ToSlash(f), "/src/runtime/proc.go") {
			goroot = filepath.Dir(filepath.Dir(f))
			break
		}
	}
	under := func(f, dir string) bool {
		rel, err := filepath.Rel(dir, f)
		return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
	}
	roots := map[string]bool{}
	rootOf := map[string]string{} // directory → its module root ("" none)
	for _, f := range files {
		switch {
		case strings.HasPrefix(f, "<") || !strings.ContainsAny(f, `/\`):
			continue // generated: <autogenerated>, a test's _testmain.go
		case goroot != "" && under(f, goroot):
			continue
		case strings.Contains(filepath.ToSlash(f), "@"):
			continue // the module cache: path@version
		case slices.ContainsFunc(skip, func(d string) bool { return under(f, d) }):
			continue
		case !filepath.IsAbs(f):
			return ID{}, fmt.Errorf("source file %s is named by a relative path (a -trimpath build)", f)
		}
		root, err := moduleRoot(filepath.Dir(f), rootOf)
		if err != nil {
			return ID{}, err
		}
		if root == "" {
			return ID{}, fmt.Errorf("source file %s is in no module (no go.mod above it)", f)
		}
		roots[root] = true
	}
	h := sha256.New()
	fmt.Fprintf(h, "go %s\n", goVersion)
	sorted := slices.Sorted(maps.Keys(roots))
	for _, root := range sorted {
		if err := hashModule(h, root, skip); err != nil {
			return ID{}, err
		}
	}
	return ID{Digest: hex.EncodeToString(h.Sum(nil)), How: fmt.Sprintf("sources of %d local module(s)", len(sorted))}, nil
}

// moduleRoot is the nearest directory at or above dir holding a go.mod,
// or "" when there is none; memo keeps the answers per directory.
func moduleRoot(dir string, memo map[string]string) (string, error) {
	if r, ok := memo[dir]; ok {
		return r, nil
	}
	root := ""
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
		root = dir
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("looking for the module of %s: %w", dir, err)
	} else if up := filepath.Dir(dir); up != dir {
		if root, err = moduleRoot(up, memo); err != nil {
			return "", err
		}
	}
	memo[dir] = root
	return root, nil
}

// hashModule writes to h root and the relative name and SHA-256 of each
// non-test .go file, go.mod, go.sum and embedded file of its module,
// leaving out nested modules, skip and the directories Go ignores.
func hashModule(h io.Writer, root string, skip []string) error {
	fmt.Fprintf(h, "module %s\n", root)
	sums := map[string][sha256.Size]byte{} // each file read once
	embeds := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p == root {
				return nil
			}
			if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules" || slices.Contains(skip, p) {
				return fs.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return fs.SkipDir
			}
			return nil
		}
		goFile := strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go")
		if !d.Type().IsRegular() || !goFile && name != "go.mod" && name != "go.sum" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sums[p] = sha256.Sum256(b)
		if goFile {
			return embedded(p, b, embeds)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("hashing the module at %s: %w", root, err)
	}
	for p := range embeds {
		if _, ok := sums[p]; ok {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("hashing the module at %s: %w", root, err)
		}
		sums[p] = sha256.Sum256(b)
	}
	for _, p := range slices.Sorted(maps.Keys(sums)) {
		rel, _ := filepath.Rel(root, p)
		fmt.Fprintf(h, "%s %x\n", filepath.ToSlash(rel), sums[p])
	}
	return nil
}

// embedded adds to out the files the go:embed directives of the Go file
// at path (its bytes b) name, directories with every file below them.
func embedded(path string, b []byte, out map[string]bool) error {
	if !bytes.Contains(b, []byte("//go:embed")) {
		return nil
	}
	dir := filepath.Dir(path)
	for line := range bytes.Lines(b) {
		rest, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("//go:embed "))
		if !ok {
			continue
		}
		for _, pat := range strings.Fields(string(rest)) {
			pat = strings.TrimPrefix(strings.Trim(pat, "\"`"), "all:")
			matches, err := filepath.Glob(filepath.Join(dir, filepath.FromSlash(pat)))
			if err != nil {
				return fmt.Errorf("%s: go:embed pattern %q: %w", path, pat, err)
			}
			for _, m := range matches {
				err := filepath.WalkDir(m, func(p string, d fs.DirEntry, err error) error {
					if err != nil {
						return err
					}
					if d.Type().IsRegular() {
						out[p] = true
					}
					return nil
				})
				if err != nil {
					return fmt.Errorf("%s: go:embed %s: %w", path, pat, err)
				}
			}
		}
	}
	return nil
}
