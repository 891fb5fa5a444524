package bhasha_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/cmd/cli"
	"github.com/bhashalab/bhasha/studies/experiment"
)

// A fenced block of README.md or docs/*.md is checked by its info string:
//
//   - go: compiled (go vet) against this checkout. A block that starts
//     with a package clause is a file of its own; any other block is
//     declarations or, when it does not parse as declarations, the body
//     of a function with ctx (a context.Context) in scope. Such a block
//     may start with import declarations; it gets the imports of every
//     go block of its page whose names it uses.
//   - sh, bash, console (its "$ " lines): every bhasha command line is
//     parsed against the command's own flags (and a program the block
//     builds with "go build -o NAME" is such a command), every make
//     target exists in the Makefile, every go test -bench names a
//     benchmark of its packages, and every path under one of the
//     repository's folders exists (a <placeholder> stands for any name).
//   - yaml: parsed and validated as an experiment file (bhasha.Parse),
//     its datasets, request files and API keys excepted: they are the
//     reader's.
//   - sql: left to its page's own test, which runs it with DuckDB.
//
// The HTML comment on the line before a fence replaces these checks:
// "<!-- checked by FILE TestName -->" (FILE holds TestName and names the
// page), "<!-- excerpt of FILE -->" (every line of the block, less a
// trailing // comment, is a line of FILE), or "<!-- not checked: why -->".
// A block of any other info string, or none, needs one of them.
func TestDocsCodeBlocks(t *testing.T) {
	blocks := mdBlocks(t)
	var compile []mdBlock
	for _, b := range blocks {
		t.Run(fmt.Sprintf("%s:%d", b.page, b.line), func(t *testing.T) {
			if b.info == "go" && b.marker == "" {
				compile = append(compile, b)
				return
			}
			for _, msg := range checkBlock(t, b) {
				t.Error(msg)
			}
		})
	}
	t.Run("go", func(t *testing.T) {
		for _, msg := range compileGoBlocks(t, blocks, compile) {
			t.Error(msg)
		}
	})
}

// checkBlock is what is wrong with b, a block that is not compiled.
func checkBlock(t *testing.T, b mdBlock) problems {
	var p problems
	switch {
	case b.marker != "":
		checkMarker(&p, b)
	case b.info == "sh" || b.info == "bash" || b.info == "console":
		checkShell(&p, b)
	case b.info == "yaml":
		checkExperimentYAML(t, &p, b)
	case b.info == "sql":
	default:
		p.add("%s:%d: a ```%s block is checked by nothing: mark it <!-- checked by FILE TestName -->, <!-- excerpt of FILE --> or <!-- not checked: why --> on the line before", b.page, b.line, b.info)
	}
	return p
}

// problems are what the checks find wrong, each naming page and line.
type problems []string

func (p *problems) add(format string, a ...any) { *p = append(*p, fmt.Sprintf(format, a...)) }

// mdBlock is one fenced code block of a Markdown page.
type mdBlock struct {
	page   string // the page's path in the repository, slash-separated
	line   int    // the line of the opening fence
	info   string // the fence's info string
	text   string // the lines between the fences
	marker string // the HTML comment on the line before the fence, trimmed
}

// docPages are README.md and docs/*.md.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("docs/*.md")
	if err != nil || len(pages) == 0 {
		t.Fatalf("docs/*.md: %v (%d pages)", err, len(pages))
	}
	return append([]string{"README.md"}, pages...)
}

// mdBlocks are the fenced blocks of every page, in order.
func mdBlocks(t *testing.T) []mdBlock {
	t.Helper()
	var out []mdBlock
	for _, page := range docPages(t) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		for i := 0; i < len(lines); i++ {
			fence, ok := strings.CutPrefix(lines[i], "```")
			if !ok {
				continue
			}
			blk := mdBlock{page: filepath.ToSlash(page), line: i + 1, info: strings.TrimSpace(fence)}
			if i > 0 {
				if c, ok := strings.CutPrefix(strings.TrimSpace(lines[i-1]), "<!--"); ok {
					blk.marker = strings.TrimSpace(strings.TrimSuffix(c, "-->"))
				}
			}
			j := i + 1
			for j < len(lines) && !strings.HasPrefix(lines[j], "```") {
				j++
			}
			if j == len(lines) {
				t.Fatalf("%s:%d: the block is not closed", page, i+1)
			}
			blk.text = strings.Join(lines[i+1:j], "\n") + "\n"
			out = append(out, blk)
			i = j
		}
	}
	return out
}

// checkMarker checks what the comment before b says of it.
func checkMarker(p *problems, b mdBlock) {
	if why, ok := strings.CutPrefix(b.marker, "not checked:"); ok {
		if strings.TrimSpace(why) == "" {
			p.add("%s:%d: <!-- not checked: --> says not why", b.page, b.line)
		}
		return
	}
	if file, ok := strings.CutPrefix(b.marker, "excerpt of "); ok {
		src, err := os.ReadFile(strings.TrimSpace(file))
		if err != nil {
			p.add("%s:%d: %v", b.page, b.line, err)
			return
		}
		have := map[string]bool{}
		for l := range strings.Lines(string(src)) {
			have[strings.TrimSpace(l)] = true
		}
		comment := regexp.MustCompile(`\s+// .*$`) // the page's note on a line
		for i, l := range strings.Split(strings.TrimSuffix(b.text, "\n"), "\n") {
			if l = strings.TrimSpace(comment.ReplaceAllString(l, "")); l != "" && !have[l] {
				p.add("%s:%d: %q is not a line of %s", b.page, b.line+1+i, l, file)
			}
		}
		return
	}
	if rest, ok := strings.CutPrefix(b.marker, "checked by "); ok {
		f := strings.Fields(rest)
		if len(f) != 2 || !strings.HasPrefix(f[1], "Test") {
			p.add("%s:%d: want <!-- checked by FILE TestName -->, got <!-- %s -->", b.page, b.line, b.marker)
			return
		}
		src, err := os.ReadFile(f[0])
		if err != nil {
			p.add("%s:%d: %v", b.page, b.line, err)
			return
		}
		if !bytes.Contains(src, []byte("func "+f[1]+"(t *testing.T)")) {
			p.add("%s:%d: %s has no %s", b.page, b.line, f[0], f[1])
		}
		if !bytes.Contains(src, []byte(b.page)) && !bytes.Contains(src, []byte(`"`+filepath.Base(b.page)+`"`)) {
			p.add("%s:%d: %s does not read %s", b.page, b.line, f[0], b.page)
		}
		return
	}
	p.add("%s:%d: unknown marker <!-- %s -->", b.page, b.line, b.marker)
}

// checkExperimentYAML parses and validates b as an experiment file. The
// only problems allowed are files that the block names and this machine
// lacks (a dataset under /data, a request file): the reader supplies them,
// as they do the variables that api_key_env names.
func checkExperimentYAML(t *testing.T, p *problems, b mdBlock) {
	for _, m := range regexp.MustCompile(`api_key_env: *([A-Za-z_][A-Za-z0-9_]*)`).FindAllStringSubmatch(b.text, -1) {
		t.Setenv(m[1], "docs-example-key") // the reader's key
	}
	_, err := bhasha.Parse(context.Background(), []byte(b.text))
	if err == nil {
		return
	}
	var ps experiment.Problems
	if !errors.As(err, &ps) {
		p.add("%s:%d: %v", b.page, b.line, err)
		return
	}
	for _, pr := range ps {
		if !missingFile(pr.Msg, b.text) {
			p.add("%s:%d: %s", b.page, b.line+pr.Line, pr.Msg)
		}
	}
}

// missingFile reports whether msg says that a file the YAML text names
// does not exist.
func missingFile(msg, text string) bool {
	if !strings.Contains(msg, "no such file") && !strings.Contains(msg, "does not exist") {
		return false
	}
	for _, m := range regexp.MustCompile(`(?:path|requests|tokenizer): *([^\s,}]+)`).FindAllStringSubmatch(text, -1) {
		if _, err := os.Stat(m[1]); err != nil && strings.Contains(msg, m[1]) {
			return true
		}
	}
	return false
}

// checkShell checks the command lines of a sh, bash or console block.
func checkShell(p *problems, b mdBlock) {
	built := map[string]bool{} // programs the block builds: bhasha commands
	for _, l := range shellLines(b) {
		for _, cmd := range shellCommands(p, b, l.n, l.text) {
			// What runs the command: variables set for it, time, nohup.
			for len(cmd) > 0 && regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`).MatchString(cmd[0]) {
				cmd = cmd[1:]
			}
			if len(cmd) > 0 && (cmd[0] == "time" || cmd[0] == "/usr/bin/time" || cmd[0] == "nohup") {
				cmd = cmd[1:]
				for len(cmd) > 0 && strings.HasPrefix(cmd[0], "-") {
					cmd = cmd[1:]
				}
			}
			if len(cmd) == 0 {
				continue
			}
			where := fmt.Sprintf("%s:%d", b.page, l.n)
			checkPaths(p, where, cmd[1:])
			prog := cmd[0]
			switch {
			case prog == "bhasha" || strings.TrimPrefix(prog, "./") == "bin/bhasha" || built[strings.TrimPrefix(prog, "./")]:
				checkBhashaArgs(p, where, cmd[1:])
			case prog == "make":
				checkMakeTargets(p, where, cmd[1:])
			case prog == "go" && len(cmd) > 1 && cmd[1] == "build":
				if i := slices.Index(cmd, "-o"); i > 0 && i+1 < len(cmd) {
					built[cmd[i+1]] = true
				}
			case prog == "go" && len(cmd) > 1 && cmd[1] == "test":
				checkBenchmarks(p, where, cmd[2:])
			}
		}
	}
}

// shellLine is a command line of a block and its line on the page.
type shellLine struct {
	n    int
	text string
}

// shellLines are b's command lines in order, continuations joined; a
// console block's are its "$ " lines.
func shellLines(b mdBlock) []shellLine {
	var out []shellLine
	lines := strings.Split(strings.TrimSuffix(b.text, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		n, l := b.line+1+i, lines[i]
		if b.info == "console" {
			var ok bool
			if l, ok = strings.CutPrefix(l, "$ "); !ok {
				continue
			}
		}
		for strings.HasSuffix(l, `\`) && i+1 < len(lines) {
			i++
			l = strings.TrimSuffix(l, `\`) + " " + lines[i]
		}
		out = append(out, shellLine{n, l})
	}
	return out
}

// shellCommands splits a command line into its commands' words, quotes
// removed, at ;, &&, ||, | and &, up to a comment.
func shellCommands(p *problems, b mdBlock, n int, line string) [][]string {
	var cmds [][]string
	var cmd []string
	var word strings.Builder
	inWord := false
	end := func() {
		if inWord {
			cmd = append(cmd, word.String())
			word.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(line[i+1:], c)
			if j < 0 {
				p.add("%s:%d: unclosed quote", b.page, n)
				return cmds
			}
			word.WriteString(line[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == ' ' || c == '\t':
			end()
		case c == '#' && !inWord:
			end()
			return append(cmds, cmd)
		case c == ';' || c == '|' || c == '&':
			end()
			if len(cmd) > 0 {
				cmds = append(cmds, cmd)
			}
			cmd = nil
			if i+1 < len(line) && (line[i+1] == c) {
				i++
			}
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	end()
	if len(cmd) > 0 {
		cmds = append(cmds, cmd)
	}
	return cmds
}

// checkPaths checks that each argument naming a path under one of the
// repository's folders (or under /path/to/bhasha/, the checkout) exists;
// a <placeholder> and a {a,b} list are expanded as a shell would.
func checkPaths(p *problems, where string, args []string) {
	ignored, err := gitIgnoredTop()
	if err != nil {
		p.add("%v", err)
		return
	}
	for _, a := range args {
		if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
			a = v
		}
		if strings.Contains(a, "$") || strings.Contains(a, "://") || strings.HasPrefix(a, "-") {
			continue
		}
		path, checkout := strings.CutPrefix(a, "/path/to/bhasha")
		if checkout {
			path = "." + path
		} else if first, _, _ := strings.Cut(strings.TrimPrefix(a, "./"), "/"); !strings.Contains(a, "/") || ignored[first] || first == "." || first == ".." {
			continue
		} else if st, err := os.Stat(first); err != nil || !st.IsDir() {
			continue
		}
		pattern := regexp.MustCompile(`<[^>]+>`).ReplaceAllString(path, "*")
		for _, alt := range braces(pattern) {
			if m, err := filepath.Glob(filepath.FromSlash(alt)); err != nil || len(m) == 0 {
				p.add("%s: %s does not exist in the repository", where, alt)
			}
		}
	}
}

// braces expands one {a,b,...} list in p.
func braces(p string) []string {
	i, j := strings.IndexByte(p, '{'), strings.IndexByte(p, '}')
	if i < 0 || j < i {
		return []string{p}
	}
	var out []string
	for _, alt := range strings.Split(p[i+1:j], ",") {
		out = append(out, p[:i]+alt+p[j+1:])
	}
	return out
}

// gitIgnoredTop are the top-level folders .gitignore names (/out/, /bin/):
// what the build writes, not part of the repository.
func gitIgnoredTop() (map[string]bool, error) {
	b, err := os.ReadFile(".gitignore")
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for l := range strings.Lines(string(b)) {
		if m := regexp.MustCompile(`^/([^/*]+)/?\s*$`).FindStringSubmatch(l); m != nil {
			out[m[1]] = true
		}
	}
	return out, nil
}

// checkMakeTargets checks that every target among make's args is one of
// the Makefile's.
func checkMakeTargets(p *problems, where string, args []string) {
	b, err := os.ReadFile("Makefile")
	if err != nil {
		p.add("%v", err)
		return
	}
	targets := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^([A-Za-z0-9_.-]+):`).FindAllStringSubmatch(string(b), -1) {
		targets[m[1]] = true
	}
	for _, a := range args {
		if !strings.HasPrefix(a, "-") && !strings.Contains(a, "=") && !targets[a] {
			p.add("%s: make %s: the Makefile has no such target", where, a)
		}
	}
}

// checkBenchmarks checks that go test's -bench pattern (other than .)
// matches a benchmark of the packages it names.
func checkBenchmarks(p *problems, where string, args []string) {
	i := slices.Index(args, "-bench")
	if i < 0 || i+1 >= len(args) || args[i+1] == "." {
		return
	}
	re, err := regexp.Compile(args[i+1])
	if err != nil {
		p.add("%s: -bench %s: %v", where, args[i+1], err)
		return
	}
	for _, pkg := range args {
		if !strings.HasPrefix(pkg, "./") || strings.Contains(pkg, "...") {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(pkg, "*_test.go"))
		found := false
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				p.add("%v", err)
				return
			}
			for _, m := range regexp.MustCompile(`(?m)^func Benchmark(\w*)\(`).FindAllStringSubmatch(string(src), -1) {
				found = found || re.MatchString(m[1])
			}
		}
		if !found {
			p.add("%s: go test -bench %s: %s has no such benchmark", where, args[i+1], pkg)
		}
	}
}

// checkBhashaArgs parses a bhasha command line's arguments against the
// command's flags, as Go's flag package would: every flag is the
// command's, every flag that takes a value has one, and no flag follows
// an argument (the flag package would not read it).
// hasSubcommand reports whether the bhasha command cmd takes a
// subcommand (batch export, datasets check, cluster slurm).
func hasSubcommand(cmd string) bool { return cmd == "batch" || cmd == "datasets" || cmd == "cluster" }

func checkBhashaArgs(p *problems, where string, args []string) {
	sub := 1
	if len(args) > 0 && hasSubcommand(args[0]) {
		sub = 2
	}
	if len(args) < sub {
		p.add("%s: bhasha %s: no command", where, strings.Join(args, " "))
		return
	}
	flags, err := bhashaFlags(args[:sub])
	if err != nil {
		p.add("%s: bhasha %s: %v", where, strings.Join(args[:sub], " "), err)
		return
	}
	positional := false
	for i := sub; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return
		}
		if !strings.HasPrefix(a, "-") || len(a) == 1 {
			positional = true
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		takesValue, ok := flags[name]
		switch {
		case positional:
			p.add("%s: bhasha %s: %s comes after an argument, where it is not read as a flag", where, args[0], a)
		case !ok:
			p.add("%s: bhasha %s has no flag %s", where, strings.Join(args[:sub], " "), a)
		case takesValue && !hasValue:
			if i+1 >= len(args) {
				p.add("%s: bhasha %s: %s needs a value", where, args[0], a)
			}
			i++
		}
	}
}

// bhashaFlags are a bhasha command's flags, each saying whether it takes
// a value, as its --help lists them.
func bhashaFlags(cmd []string) (map[string]bool, error) {
	var stdout, stderr bytes.Buffer
	err := cli.Run(context.Background(), append(slices.Clone(cmd), "--help"), &stdout, &stderr, nil)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		return nil, err
	}
	flags := map[string]bool{}
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		l, ok := strings.CutPrefix(sc.Text(), "  -")
		if !ok {
			continue
		}
		l, _, _ = strings.Cut(l, "\t")
		f := strings.Fields(l)
		flags[f[0]] = len(f) > 1
	}
	if len(flags) == 0 && cmd[0] != "version" {
		return nil, fmt.Errorf("--help lists no flags:\n%s%s", stdout.String(), stderr.String())
	}
	return flags, nil
}

// compileGoBlocks compiles blocks, go blocks of all, in a workspace that
// uses this checkout (go vet) and says what is wrong with them; each block
// is a package of its own whose positions are the page's.
func compileGoBlocks(t *testing.T, all, blocks []mdBlock) problems {
	if testing.Short() {
		t.Skip("builds programs")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	repo, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go [0-9.]+$`).Find(gomod)
	work := t.TempDir()
	mod := filepath.Join(work, "docs")
	files := map[string]string{
		filepath.Join(mod, "go.mod"):   "module example.com/docs\n\n" + string(goLine) + "\n",
		filepath.Join(work, "go.work"): string(goLine) + "\n\nuse (\n\t./docs\n\t" + repo + "\n)\n",
	}
	var p problems
	for i, b := range blocks {
		src, err := goBlockFile(b, pageImports(t, all, b.page), filepath.Join(repo, filepath.FromSlash(b.page)))
		if err != nil {
			p.add("%s:%d: %v", b.page, b.line, err)
			continue
		}
		files[filepath.Join(mod, fmt.Sprintf("b%d", i), "block.go")] = src
	}
	for name, text := range files {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(goBin, "vet", "./...")
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOWORK="+filepath.Join(work, "go.work"), "GOFLAGS=-buildvcs=false")
	if msg, err := cmd.CombinedOutput(); err != nil {
		p.add("go vet of the go blocks: %v\n%s", err, strings.ReplaceAll(string(msg), repo+string(filepath.Separator), ""))
	}
	return p
}

// goImport is one import declaration of a page's go blocks.
type goImport struct{ name, path string }

// pageImports are the imports that page's go blocks declare.
func pageImports(t *testing.T, all []mdBlock, page string) []goImport {
	var out []goImport
	for _, b := range all {
		if b.page != page || b.info != "go" || strings.HasPrefix(b.text, "package ") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), "", "package p\n"+b.text, parser.ImportsOnly)
		if err != nil {
			continue
		}
		for _, s := range f.Imports {
			p, _ := strconv.Unquote(s.Path.Value)
			name := filepath.Base(p)
			if s.Name != nil {
				name = s.Name.Name
			}
			out = append(out, goImport{name, p})
		}
	}
	return out
}

// goBlockFile is the Go file that compiles b, whose page is at path:
// b itself when it starts with a package clause; otherwise b's
// declarations, or its statements in a function with ctx in scope, with
// the imports of its page that it uses and its variables used.
func goBlockFile(b mdBlock, imports []goImport, path string) (string, error) {
	if strings.HasPrefix(b.text, "package ") {
		return fmt.Sprintf("//line %s:%d\n%s", path, b.line+1, b.text), nil
	}
	// Its own imports are its page's; what follows them is the code.
	code, line := b.text, b.line+1
	fset := token.NewFileSet()
	if f, err := parser.ParseFile(fset, "", "package p\n"+b.text, parser.ImportsOnly); err == nil && len(f.Decls) > 0 {
		end := fset.Position(f.Decls[len(f.Decls)-1].End()).Offset - len("package p\n")
		line += strings.Count(b.text[:end], "\n")
		code = b.text[end:]
	}
	decls := true
	if _, err := parser.ParseFile(token.NewFileSet(), "", "package p\n"+code, 0); err != nil {
		decls = false
	}
	body := code
	if !decls {
		f, err := parser.ParseFile(fset, "", "package p\nfunc _() {\n"+code+"\n}\n", 0)
		if err != nil {
			return "", fmt.Errorf("neither declarations nor statements: %v", err)
		}
		var used []string
		for _, s := range f.Decls[0].(*ast.FuncDecl).Body.List {
			if a, ok := s.(*ast.AssignStmt); ok && a.Tok == token.DEFINE {
				for _, l := range a.Lhs {
					if id, ok := l.(*ast.Ident); ok && id.Name != "_" {
						used = append(used, "_ = "+id.Name)
					}
				}
			}
		}
		body = code + "\n" + strings.Join(used, "\n") + "\n"
	}
	wrapped := "package p\nfunc _() {\n" + code + "\n}\n"
	if decls {
		wrapped = "package p\n" + code
	}
	f, err := parser.ParseFile(token.NewFileSet(), "", wrapped, 0)
	if err != nil {
		return "", err
	}
	uses := map[string]bool{} // the names of the packages it uses
	ast.Inspect(f, func(n ast.Node) bool {
		if s, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := s.X.(*ast.Ident); ok {
				uses[id.Name] = true
			}
		}
		return true
	})
	var src strings.Builder
	src.WriteString("package block\n\nimport (\n\tdocsctx \"context\"\n")
	seen := map[string]bool{}
	for _, im := range imports {
		if uses[im.name] && !seen[im.name] {
			seen[im.name] = true
			fmt.Fprintf(&src, "\t%s %q\n", im.name, im.path)
		}
	}
	src.WriteString(")\n\nvar _ docsctx.Context\n\n")
	if decls {
		fmt.Fprintf(&src, "//line %s:%d\n%s", path, line, body)
		return src.String(), nil
	}
	fmt.Fprintf(&src, "func _(ctx docsctx.Context) {\n//line %s:%d\n%s}\n", path, line, body)
	return src.String(), nil
}

// The checks find what is wrong in a block, naming its line, and nothing
// in a right one.
func TestDocsChecksFindMistakes(t *testing.T) {
	for _, c := range []struct {
		name  string
		block mdBlock
		want  string // in a problem; "" for none
	}{
		{"right command", mdBlock{info: "sh", text: "bhasha run --config experiments/paper/indicklar-main.yaml --out runs/x   # a comment\n"}, ""},
		{"unknown flag", mdBlock{info: "sh", text: "bhasha run --confg x.yaml --out runs/x\n"}, "bhasha run has no flag --confg"},
		{"flag without its value", mdBlock{info: "sh", text: "bhasha report --run runs/x --html\n"}, "--html needs a value"},
		{"flag after an argument", mdBlock{info: "sh", text: "bhasha run runs/x --out y\n"}, "--out comes after an argument"},
		{"unknown command", mdBlock{info: "console", text: "$ bhasha bogus --out x\noutput line\n"}, `unknown command "bogus"`},
		{"continued line", mdBlock{info: "bash", text: "bhasha report --run runs/x \\\n  --xlsx r.xlsx --bogus\n"}, "no flag --bogus"},
		{"a built command is bhasha", mdBlock{info: "sh", text: "go build -o mystudy .\ncp x y\nls\n./mystudy run --config b.yaml --bogus\n"}, "no flag --bogus"},
		{"timed command", mdBlock{info: "sh", text: "/usr/bin/time -v bhasha report --bogus\n"}, "no flag --bogus"},
		{"make target", mdBlock{info: "sh", text: "make demo nosuchtarget KERNEL=x\n"}, "make nosuchtarget: the Makefile has no such target"},
		{"missing path", mdBlock{info: "sh", text: "bhasha run --config=experiments/paper/nosuch.yaml --out runs/x\n"}, "experiments/paper/nosuch.yaml does not exist"},
		{"placeholder path", mdBlock{info: "sh", text: "bhasha run --config experiments/paper/<file>.yaml --out runs/<file>\n"}, ""},
		{"checkout path", mdBlock{info: "sh", text: "cp /path/to/bhasha/examples/brevity/testdata/{brevity.yaml,nosuch.jsonl} .\n"}, "./examples/brevity/testdata/nosuch.jsonl does not exist"},
		{"benchmark", mdBlock{info: "sh", text: "go test -run '^$' -bench NoSuchBench -benchtime 1x ./cli\n"}, "./cli has no such benchmark"},
		{"experiment", mdBlock{info: "yaml", text: "name: x\nstudy: indicklar\ndataset: {path: /data/IndicKLAR, format: klar}\nlanguages: [hin]\nstrategy: [baseline]\nmodels: [{name: m, served_name: m, api_key_env: DOCS_TEST_KEY}]\n"}, `docs/outputs.md:15: unknown key "strategy"`},
		{"experiment with the reader's files", mdBlock{info: "yaml", text: "name: x\nstudy: indicklar\ndataset: {path: /data/IndicKLAR, format: klar}\nlanguages: [hin]\nmodels: [{name: m, served_name: m, endpoints: [http://gpu1:8000/v1], api_key_env: DOCS_TEST_KEY}]\n"}, ""},
		{"unmarked block", mdBlock{info: "text", text: "output\n"}, "checked by nothing"},
		{"excerpt", mdBlock{info: "text", marker: "excerpt of examples/brevity/example_test.go", text: "figs, _ := r.Figures()   // a note\nfigs := nothing()\n"}, `"figs := nothing()" is not a line of`},
		{"checked by a test that is not there", mdBlock{info: "python", marker: "checked by outputs_test.go TestNoSuch", text: "x\n"}, "outputs_test.go has no TestNoSuch"},
		{"checked by a test that does not read the page", mdBlock{page: "docs/cli.md", info: "python", marker: "checked by outputs_test.go TestOutputsReadAsDocumented", text: "x\n"}, "does not read docs/cli.md"},
		{"not checked, and not why", mdBlock{info: "text", marker: "not checked:", text: "x\n"}, "says not why"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.block.line = 10
			if c.block.page == "" {
				c.block.page = "docs/outputs.md"
			}
			got := checkBlock(t, c.block)
			if c.want == "" && len(got) > 0 || c.want != "" && !slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, c.want) }) {
				t.Errorf("problems %q, want one with %q", got, c.want)
			}
		})
	}
	t.Run("go", func(t *testing.T) {
		all := []mdBlock{
			{page: "docs/from-go.md", line: 1, info: "go", text: "import \"github.com/bhashalab/bhasha\"\n\nexp := bhasha.Distractors(\"x\")\nr, err := bhasha.Run(ctx, exp)\n"},
			{page: "docs/from-go.md", line: 20, info: "go", text: "exp := bhasha.Distractors(\"x\")\nr := bhasha.NoSuchFunc(exp)\n"},
			{page: "docs/from-go.md", line: 30, info: "go", text: "package main\n\nfunc main() { undefinedThing() }\n"},
		}
		got := strings.Join(compileGoBlocks(t, all, all), "\n")
		for _, want := range []string{"docs/from-go.md:22: undefined: bhasha.NoSuchFunc", "docs/from-go.md:33: undefined: undefinedThing"} {
			if !strings.Contains(got, want) {
				t.Errorf("go vet says\n%s\nwant %q", got, want)
			}
		}
		if strings.Contains(got, "from-go.md:4") || strings.Contains(got, "from-go.md:5") {
			t.Errorf("the right block (its variables unused) failed:\n%s", got)
		}
	})
}

// README.md stays a short front page, and no page refers to commits or
// issues: the pages describe the code as it is.
func TestDocsPages(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(readme), "\n"); n > 300 {
		t.Errorf("README.md has %d lines, more than 300: move reference material to a docs/ page", n)
	}
	for _, page := range docPages(t) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(b), "\n") {
			for _, ref := range historyRefs(l) {
				t.Errorf("%s:%d: %q refers to a commit or an issue", page, i+1, ref)
			}
		}
	}
}

var (
	// commitHash is 7 to 40 hexadecimal digits, not part of a longer word.
	commitHash = regexp.MustCompile(`(?:^|[^0-9A-Za-z_])([0-9a-f]{7,40})(?:[^0-9A-Za-z_]|$)`)
	// issueRef is "issue 12", "issues #3" or "#12" (not an HTML entity).
	issueRef = regexp.MustCompile(`(?i)\bissues?\s+#?[0-9]+\b|(?:^|[^&0-9A-Za-z_/])#[0-9]+\b`)
)

// historyRefs are the commit hashes (with a letter and a digit) and issue
// references in line.
func historyRefs(line string) []string {
	var out []string
	for _, m := range commitHash.FindAllStringSubmatch(line, -1) {
		if strings.ContainsAny(m[1], "abcdef") && strings.ContainsAny(m[1], "0123456789") {
			out = append(out, m[1])
		}
	}
	return append(out, issueRef.FindAllString(line, -1)...)
}

func TestHistoryRefs(t *testing.T) {
	for _, c := range []struct {
		line string
		want int
	}{
		{"fixed in 3168f5d, see there", 1},
		{"commit 8b0ec0f0a1b2c3d4e5f60718293a4b5c6d7e8f90.", 1},
		{"as issue 12 says", 1},
		{"see issue #7 and #42", 2},
		{"(#12)", 1},
		{"the digest deadbeef has no digit", 0},
		{"6364170 records: digits alone", 0},
		{"a SHA-256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", 0},
		{"[make targets](cli.md#make-targets)", 0},
		{"the quote &#34; is an entity", 0},
		{"a longer word: x0123abcd, abc1234_x", 0},
	} {
		if got := historyRefs(c.line); len(got) != c.want {
			t.Errorf("historyRefs(%q) = %q, want %d", c.line, got, c.want)
		}
	}
}

// Every flag that an inline `bhasha COMMAND …` of a page names is one of
// the command's own (the command tables of docs/cli.md included).
func TestDocsInlineCommands(t *testing.T) {
	span := regexp.MustCompile("`bhasha ([^`]*)`")
	for _, page := range docPages(t) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(b), "\n") {
			for _, m := range span.FindAllStringSubmatch(l, -1) {
				var p problems
				checkInlineCommand(&p, fmt.Sprintf("%s:%d", page, i+1), m[1])
				for _, msg := range p {
					t.Error(msg)
				}
			}
		}
	}
}

// checkInlineCommand checks that the flags that cmd, a bhasha command
// line as a page writes it inline ("run --config FILE [--no-cache]"),
// names are the command's; a span that names no flag is not checked.
func checkInlineCommand(p *problems, where, cmd string) {
	named := regexp.MustCompile(`(?:^|[\s\[|])--([a-z][a-z0-9-]*)`).FindAllStringSubmatch(cmd, -1)
	if len(named) == 0 {
		return
	}
	words := strings.Fields(cmd)
	sub := 1
	if hasSubcommand(words[0]) {
		sub = min(2, len(words))
	}
	flags, err := bhashaFlags(words[:sub])
	if err != nil {
		p.add("%s: bhasha %s: %v", where, strings.Join(words[:sub], " "), err)
		return
	}
	for _, m := range named {
		if _, ok := flags[m[1]]; !ok {
			p.add("%s: bhasha %s has no flag --%s", where, strings.Join(words[:sub], " "), m[1])
		}
	}
}

func TestCheckInlineCommand(t *testing.T) {
	for _, c := range []struct {
		cmd, want string // want: in a problem; "" for none
	}{
		{"run --config FILE --out DIR [--endpoint URL ...] [--no-cache]", ""},
		{"sim --addr 127.0.0.1:8000 [--config EXP.yaml \\| --dataset PATH]", ""},
		{"segment seal v1 sha256:…", ""},
		{"datasets check PATH [--format F] [--lang CODES] [--json]", ""},
		{"report --run DIR [--pdf FILE]", "bhasha report has no flag --pdf"},
		{"batch import --out DIR --file F [--bogus]", "bhasha batch import has no flag --bogus"},
		{"frobnicate --out DIR", `unknown command "frobnicate"`},
	} {
		var p problems
		checkInlineCommand(&p, "docs/cli.md:1", c.cmd)
		if c.want == "" && len(p) > 0 || c.want != "" && !slices.ContainsFunc(p, func(s string) bool { return strings.Contains(s, c.want) }) {
			t.Errorf("checkInlineCommand(%q) = %q, want a problem with %q", c.cmd, p, c.want)
		}
	}
}
