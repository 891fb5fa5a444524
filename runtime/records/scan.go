package records

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bhashalab/bhasha/internal/atomicfile"
	"github.com/bhashalab/bhasha/internal/shortlist"
	"github.com/bhashalab/bhasha/runtime/engine"
)

// Line seals: every line the Writer writes ends with ,"record_sha256":"<hex>"},
// the SHA-256 of the line up to that member followed by "}".
const sealMember = `,"record_sha256":"`

// editedWhy is why a line with seal state st is flagged, "" when it is not;
// before counts the sealed or flagged lines ahead of it.
func editedWhy(st sealState, sealedRun bool, before int) string {
	switch {
	case st == sealBroken:
		return "edited after it was written (its record_sha256 does not match the line)"
	case st == unsealed && sealedRun:
		return "has no record_sha256 while the run's manifest says its records were sealed (its seal was removed, or it was added or rewritten by another tool)"
	case st == unsealed && before > 0:
		return "has no record_sha256 while the records before it do (its seal was removed, or it was added by hand)"
	}
	return ""
}

// manifestFile is the run's manifest in a run directory.
const manifestFile = "manifest.json"

// runSealed reports dir's manifest member "records_sealed" (false without a
// manifest); an unreadable or malformed manifest is an error naming it.
func runSealed(dir string) (bool, error) {
	path := filepath.Join(dir, manifestFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", path, err)
	}
	var m struct {
		RecordsSealed bool `json:"records_sealed"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return false, fmt.Errorf("reading %s: %w", path, err)
	}
	return m.RecordsSealed, nil
}

// sealLen is the length of the seal member, its digest and the closing `"}`.
const sealLen = len(sealMember) + 64 + 2

// seal seals the record at buf[start:], which ends in "}\n".
func seal(buf *bytes.Buffer, start int) {
	sum := sealSum(buf.Bytes()[start : buf.Len()-2]) // without "}\n"
	buf.Truncate(buf.Len() - 2)
	buf.WriteString(sealMember)
	buf.Write(sum[:])
	buf.WriteString("\"}\n")
}

// sealSum is the hex SHA-256 of body followed by "}".
func sealSum(body []byte) (hx [64]byte) {
	h := sha256.New()
	h.Write(body)
	h.Write([]byte{'}'})
	var sum [32]byte
	hex.Encode(hx[:], h.Sum(sum[:0]))
	return hx
}

// sealState says whether a line carries a seal and whether it matches.
type sealState int

const (
	unsealed sealState = iota
	sealOK
	sealBroken
)

// checkSeal checks the seal of a line (without its newline), in the Writer's or any other format.
func checkSeal(line []byte) sealState {
	line = bytes.TrimRight(line, "\r")
	n := len(line)
	if n < sealLen+1 || !bytes.HasSuffix(line, []byte(`"}`)) {
		return checkReformatted(line)
	}
	at := n - sealLen
	if !bytes.Equal(line[at:at+len(sealMember)], []byte(sealMember)) {
		return checkReformatted(line)
	}
	if hx := sealSum(line[:at]); bytes.Equal(hx[:], line[at+len(sealMember):n-2]) {
		return sealOK
	}
	return sealBroken
}

// Tally counts records and names the first line they were found on.
type Tally struct {
	N       int    // records
	First   int    // logical line of the first (see Flag.Line)
	FirstAt string // where the first is (see Flag.At)
}

// add is t with one more record, on logical line n (at).
func (t Tally) add(n int, at string) Tally {
	if t.N == 0 {
		t.First, t.FirstAt = n, at
	}
	t.N++
	return t
}

// Conflict is a key answered by ok records that disagree; neither is trusted.
type Conflict struct {
	Key       string
	Lines     []int    // logical lines (see Flag.Line)
	At        []string // where each line is (see Flag.At)
	Responses []string // the response of each line, same order
}

func (c Conflict) String() string {
	var parts []string
	for i, at := range c.At {
		resp := fmt.Sprintf("%q", c.Responses[i])
		if r := []rune(c.Responses[i]); len(r) > 80 {
			resp = fmt.Sprintf("%q… (%d characters)", string(r[:80]), len(r))
		}
		parts = append(parts, fmt.Sprintf("%s answers %s", at, resp))
	}
	return fmt.Sprintf("key %s: %s", c.Key, strings.Join(parts, ", "))
}

// Flag is one line that cannot be trusted as written, and why.
type Flag struct {
	// Line is the record's 1-based number in the run's logical order (the
	// segments', then records.jsonl's lines), as Pick is given it.
	Line int
	// At names the file and line: "line N" or "records-000001.parquet line N".
	At  string
	Key string
	Why string
}

func (f Flag) String() string {
	return fmt.Sprintf("%s (key %s): %s", f.At, f.Key, f.Why)
}

// Scan is what a run's records hold; Commit applies the repairs it found.
type Scan struct {
	Path   string
	Done   *KeySet       // keys with an ok record (the first of each), with their request digests
	Report PrepareReport // repairs Commit would make: torn tail, failed records, identical duplicates
	Lines  int           // complete lines read

	// Experiments counts the records of each experiment named by the keys.
	Experiments map[string]Tally
	// Foreign lists the records of other experiments than ScanDir's; not in Done.
	Foreign []Flag
	// Identities counts, per model of the keys, the ok records of each
	// identity that answered them (the zero Identity: not named).
	Identities map[string]map[engine.Identity]Tally
	Simulated  int // ok records that say a simulator answered them

	Conflicts []Conflict // keys with disagreeing ok records
	Edited    []Flag     // sealed lines whose seal does not match, unsealed lines among sealed ones
	Sealed    int        // lines with a matching seal
	Unsealed  int        // lines without a seal before the first sealed one (older Bhasha)

	streamed                       // the files scanned
	conflictAt   map[[2]uint64]int // a conflicting key's index in Conflicts
	committed    bool              // Commit rewrote the file: the line numbers above are of the file before
	leaveDamaged bool              // Commit leaves damaged segments as they are (LeaveDamaged)
	interrupted  bool              // a seal was interrupted: Commit finishes it
	sealedRun    bool              // the manifest says every record was sealed (runSealed)
}

// ScanDir reads dir's records (Files) without writing: the keys answered,
// the repairs a resume would make, the experiments, identities and
// simulators named, conflicts and edited lines. Records of an experiment
// other than experiment (when not "") go only to Foreign. A directory
// without records is an empty scan; a malformed line but a torn tail is an
// error naming the file, line and field.
func ScanDir(dir, experiment string) (*Scan, error) {
	path := filepath.Join(dir, FileName)
	s := &Scan{Path: path, Done: NewKeySet(), Report: PrepareReport{Path: path},
		Experiments: map[string]Tally{}, Identities: map[string]map[engine.Identity]Tally{}, conflictAt: map[[2]uint64]int{}}
	var err error
	if s.sealedRun, err = runSealed(dir); err != nil {
		return nil, err
	}
	o := StreamOptions{WithRequests: true, strict: true}
	st, err := stream(context.Background(), dir, o, scanned, func(r *lineResult[scannedRec]) error {
		s.add(r, experiment)
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.streamed, s.Lines, s.Report.Damaged = st, st.lines, st.damaged()
	if st.torn != nil {
		s.Report.TornTail, s.Report.TornTailBytes = true, int64(st.torn.Bytes)
	}
	d, err := listFiles(dir)
	if err != nil {
		return nil, err
	}
	s.interrupted = len(d.redundant) > 0 || len(d.plain) > 0
	if err := s.readBack(s.Conflicts); err != nil {
		return nil, err
	}
	return s, nil
}

// scannedRec is what ScanDir needs of an ok record beside its key.
type scannedRec struct {
	digest    string // its request digest, computed when it has none
	mismatch  bool   // its request does not match its request_sha256
	identity  engine.Identity
	simulated bool
}

// scanned is ScanDir's work on a record.
func scanned(_ int, _ sealState, r *engine.Record) (v scannedRec, _ error) {
	if r.Status != engine.StatusOK {
		return v, nil
	}
	v.digest, v.simulated = r.RequestSHA256, r.Simulated
	if v.digest == "" && len(r.Request) > 0 { // a removed digest does not hide a changed request
		v.digest = engine.RequestDigest(r.Request)
	} else if v.digest != "" && len(r.Request) > 0 {
		v.mismatch = !requestMatches(r.Request, v.digest)
	}
	if r.Identity != nil {
		v.identity = *r.Identity
	}
	return v, nil
}

// add counts one line of the scan, in logical order.
func (s *Scan) add(r *lineResult[scannedRec], experiment string) {
	where := lineAt(r.file, r.local)
	switch why := editedWhy(r.seal, s.sealedRun, s.Sealed+len(s.Edited)); {
	case why != "":
		s.Edited = append(s.Edited, Flag{Line: r.line, At: where, Key: r.key, Why: why})
	case r.seal == sealOK:
		s.Sealed++
	default:
		s.Unsealed++ // written before records were sealed
	}
	s.Experiments[r.exp] = s.Experiments[r.exp].add(r.line, where)
	if experiment != "" && r.exp != experiment {
		s.Foreign = append(s.Foreign, Flag{Line: r.line, At: where, Key: r.key, Why: fmt.Sprintf("a record of experiment %q", r.exp)})
		return
	}
	if !r.ok {
		s.Report.DroppedFailed++
		return
	}
	if r.v.mismatch {
		s.Edited = append(s.Edited, Flag{Line: r.line, At: where, Key: r.key, Why: "its request does not match its request_sha256"})
	}
	model := keyField(r.key, 1)
	ids := s.Identities[model]
	if ids == nil {
		ids = map[engine.Identity]Tally{}
		s.Identities[model] = ids
	}
	ids[r.v.identity] = ids[r.v.identity].add(r.line, where)
	if r.v.simulated {
		s.Simulated++
	}
	if first, ok := s.Done.addLine(r.key, r.v.digest, r.response, r.line); !ok {
		if first.resp == r.response {
			s.Report.DroppedDup++
		} else {
			h := s.Done.h(r.key)
			i, ok := s.conflictAt[h]
			if !ok {
				i = len(s.Conflicts)
				s.conflictAt[h] = i
				s.Conflicts = append(s.Conflicts, Conflict{Key: r.key, Lines: []int{int(first.line)}})
			}
			s.Conflicts[i].Lines = append(s.Conflicts[i].Lines, r.line)
		}
		return
	}
	s.Report.Kept++
}

// Others says, for every experiment other than name that the keys name,
// how many records and the first line ("" when there is none).
func (s *Scan) Others(name string) string {
	var out []string
	for _, e := range slices.Sorted(maps.Keys(s.Experiments)) {
		if e == name {
			continue
		}
		t := s.Experiments[e]
		out = append(out, fmt.Sprintf("%d record(s) of experiment %q (first at %s)", t.N, e, t.FirstAt))
	}
	return strings.Join(out, ", ")
}

// Pick chooses lines to archive at Commit by line, key and identity (nil: not named).
type Pick func(line int, key string, id *engine.Identity) bool

// LeaveDamaged makes Commit leave every damaged segment as it is (for a
// pass that sends no request). Call it before Commit.
func (s *Scan) LeaveDamaged() { s.leaveDamaged = true }

// Commit rewrites the records files as a resume needs them: without a
// torn tail, failed records and identical duplicates (the first stays),
// and with the lines pick chooses moved first to dir/archive/<name>.jsonl
// (a crash leaves them in both, never in neither). Each file that loses a
// line is replaced whole (a segment left empty is removed); a damaged
// segment is kept in the archive and replaced by what could be read. It
// first finishes an interrupted seal; archived keys leave s.Done. It
// returns the archive's path and how many lines moved. After a rewrite, a
// later Commit without pick does nothing. The caller holds the exclusive
// lock.
func (s *Scan) Commit(pick Pick, name string) (string, int, error) {
	if s.committed && pick != nil { // the line numbers are the old file's
		return "", 0, errors.New("records: Scan.Commit called twice with lines to archive (scan again)")
	}
	need := s.torn != nil || s.Report.DroppedFailed > 0 || s.Report.DroppedDup > 0 || pick != nil || s.interrupted || (len(s.Report.Damaged) > 0 && !s.leaveDamaged)
	if s.committed || !need {
		return "", 0, nil
	}
	dir := filepath.Dir(s.Path)
	if s.interrupted { // finishing a seal keeps every line where it was
		if err := finishSeals(dir, nil); err != nil {
			return "", 0, err
		}
		d, err := listFiles(dir)
		if err != nil {
			return "", 0, err
		}
		if len(d.files) != len(s.files) {
			return "", 0, fmt.Errorf("records: %s changed since it was scanned (scan again)", dir)
		}
		for i := range d.files {
			d.files[i].damage = s.files[i].damage
		}
		s.files = d.files
		s.interrupted = false
	}
	var archived bytes.Buffer
	var archivedKeys []string
	drops := make([]map[int]bool, len(s.files))
	for i, f := range s.files {
		drop := map[int]bool{}
		drops[i] = drop
		if f.damage != nil && s.leaveDamaged {
			continue
		}
		err := f.eachLine(func(line []byte, local int) error {
			n := s.starts[i] + local
			var rec struct {
				Key      string           `json:"key"`
				Status   string           `json:"status"`
				Identity *engine.Identity `json:"identity"`
			}
			if err := json.Unmarshal(line, &rec); err != nil {
				return fmt.Errorf("%s line %d: %w", f.path, local, err)
			}
			_, conflict := s.conflictAt[s.Done.h(rec.Key)]
			switch {
			case pick != nil && pick(n, rec.Key, rec.Identity):
				archived.Write(line)
				archived.WriteByte('\n')
				archivedKeys = append(archivedKeys, rec.Key)
				drop[local] = true
			case rec.Status != engine.StatusOK:
				drop[local] = true
			case !s.Done.Has(rec.Key):
				// a foreign record, left for the caller to decide
			case s.Done.lineOf(rec.Key) != n && !conflict:
				drop[local] = true // an identical duplicate: the first stays
			}
			return nil
		})
		if errors.Is(err, os.ErrNotExist) && f.seg == 0 {
			continue
		}
		if err != nil {
			return "", 0, err
		}
	}
	apath := ""
	if len(archivedKeys) > 0 {
		if err := os.MkdirAll(filepath.Join(dir, ArchiveDir), 0o755); err != nil {
			return "", 0, fmt.Errorf("archiving records: %w", err)
		}
		apath = filepath.Join(dir, ArchiveDir, name+".jsonl")
		if err := noLink(apath); err != nil {
			return "", 0, err
		}
		af, err := os.OpenFile(apath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err == nil {
			if _, err = af.Write(archived.Bytes()); err == nil {
				err = af.Sync()
			}
			err = cmp.Or(err, af.Close())
		}
		if err != nil {
			return "", 0, fmt.Errorf("archiving records into %s: %w", apath, err)
		}
	}
	for i, f := range s.files {
		if f.damage != nil && s.leaveDamaged || len(drops[i]) == 0 && !(f.seg == 0 && s.torn != nil) && f.damage == nil {
			continue
		}
		if f.damage != nil { // kept in the archive; the segment becomes what could be read
			kept, err := keepDamaged(f)
			if err != nil {
				return "", 0, err
			}
			s.Report.KeptDamaged = append(s.Report.KeptDamaged, kept)
		}
		if err := rewriteFile(f, s.end(i)-s.starts[i], drops[i]); err != nil {
			return "", 0, err
		}
	}
	s.Report.RewroteFile = true
	s.committed = true
	for _, k := range archivedKeys {
		s.Done.Remove(k)
	}
	s.Report.Kept = s.Done.Len()
	return apath, len(archivedKeys), nil
}

// rewriteFile replaces f, through a synced temporary file, by its n lines
// but those drop names (1-based) and a torn last line: records.jsonl by a
// plain file, a segment by a Parquet one (removed when no line is left).
func rewriteFile(f recordFile, n int, drop map[int]bool) error {
	eachKept := func(add func([]byte) error) error {
		return f.eachLine(func(line []byte, n int) error {
			if drop[n] {
				return nil
			}
			return add(line)
		})
	}
	if f.seg == 0 {
		if _, err := os.Stat(f.path); errors.Is(err, os.ErrNotExist) {
			return nil
		}
		tmp, err := atomicfile.Create(f.path) // replaced whole, or not at all
		if err != nil {
			return err
		}
		defer tmp.Abort()
		w := bufio.NewWriterSize(tmp, 1<<20)
		err = eachKept(func(line []byte) error {
			w.Write(line)
			_, err := w.Write([]byte{'\n'})
			return err
		})
		if err == nil {
			err = w.Flush()
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", f.path, err)
		}
		if err := tmp.Commit(); err != nil {
			return err
		}
		return syncDir(filepath.Dir(f.path))
	}
	if n == len(drop) {
		if err := os.Remove(f.path); err != nil {
			return fmt.Errorf("removing %s, left with no record: %w", f.path, err)
		}
		return syncDir(filepath.Dir(f.path))
	}
	dst := filepath.Join(filepath.Dir(f.path), SegmentName(f.seg))
	if err := writeSegment(dst, f.path, segGroupRows, eachKept); err != nil || dst == f.path {
		return err
	}
	if err := os.Remove(f.path); err != nil {
		return fmt.Errorf("replacing %s by %s: %w", f.path, dst, err)
	}
	return syncDir(filepath.Dir(f.path))
}

// keyField is the i-th '|'-separated field of key, unescaped.
func keyField(key string, i int) string {
	for range i {
		_, rest, ok := strings.Cut(key, "|")
		if !ok {
			return ""
		}
		key = rest
	}
	f, _, _ := strings.Cut(key, "|")
	if strings.Contains(f, "%") {
		f = strings.NewReplacer("%7C", "|", "%25", "%").Replace(f)
	}
	return f
}

// ConflictError names every key with disagreeing ok records, or is nil.
func (s *Scan) ConflictError() error {
	if len(s.Conflicts) == 0 {
		return nil
	}
	return fmt.Errorf("%s: %d key(s) have ok records that disagree, and neither is trusted: %s", s.Path, len(s.Conflicts), shortlist.Join(s.Conflicts, 5, "; ", "and %d more key(s)", Conflict.String))
}

// EditedError names the lines that are not as they were written, or is nil.
func (s *Scan) EditedError() error {
	if len(s.Edited) == 0 {
		return nil
	}
	return fmt.Errorf("%s: %d record(s) are not as Bhasha wrote them: %s", s.Path, len(s.Edited), shortlist.Join(s.Edited, 5, "; ", "and %d more", Flag.String))
}
