package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/internal/browsertest"
)

// probeJS reads every chart back from the page once ECharts drew it:
// the option it holds (getOption), each text it drew, each Sankey flow
// as laid out, each heatmap cell with its label and place, the plot's
// and the colour scale's rectangles; and each table box's size.
const probeJS = `<script>(function(){
var out={charts:[],boxes:[],width:document.documentElement.clientWidth,height:window.innerHeight};
function fin(x){return typeof x==="number"&&isFinite(x)?x:null;}
document.querySelectorAll("div.chart").forEach(function(el){
 var c=echarts.getInstanceByDom(el),r={id:el.id,texts:[],series:[]};out.charts.push(r);if(!c)return;
 var o=c.getOption(),m=c.getModel();
 c.getZr().storage.getDisplayList(true).forEach(function(e){if(e.style&&typeof e.style.text==="string"&&e.style.text!==""&&!e.ignore&&!e.invisible)r.texts.push(e.style.text);});
 r.inverse=!!(o.yAxis&&o.yAxis[0]&&o.yAxis[0].inverse);
 var g=m.getComponent("grid");if(g&&g.coordinateSystem){var gr=g.coordinateSystem.getRect();r.grid=[gr.x,gr.y,gr.width,gr.height];}
 var vm=m.getComponent("visualMap");if(vm){var v=c.getViewOfComponentModel(vm),b=v.group.getBoundingRect().clone();b.applyTransform(v.group.getComputedTransform());
  r.scale=[b.x,b.y,b.width,b.height];r.scaleTexts=[];v.group.traverse(function(e){if(e.style&&e.style.text)r.scaleTexts.push(e.style.text);});}
 m.eachSeries(function(s,i){var x={type:s.subType};r.series.push(x);
  if(s.subType==="sankey"){
   x.links=(o.series[i].links||[]).map(function(l){return [l.source,l.target,l.value===undefined?null:l.value];});
   x.edges=s.getGraph().edges.map(function(e){var l=e.getLayout()||{},el=e.getGraphicEl(),sh=el?el.shape:{};
    return [e.node1.id,e.node2.id,fin(e.getValue()),fin(l.dy),fin(l.sy),fin(l.ty),fin(sh.x1),fin(sh.y1),fin(sh.x2),fin(sh.y2)];});}
  if(s.subType==="heatmap"){var d=s.getData();x.cells=[];
   for(var k=0;k<d.count();k++){var it=d.getRawDataItem(k),v=it.value||it,el=d.getItemGraphicEl(k),t=el&&el.getTextContent();
    var p=c.convertToPixel({seriesIndex:i},[v[0],v[1]]);x.cells.push([v[0],v[1],t?t.style.text:null,p[0],p[1],el?String(el.style.fill):null]);}}
 });
});
document.querySelectorAll(".scroll").forEach(function(s){var t=s.querySelector("table"),b=s.getBoundingClientRect();
 out.boxes.push({table:t.id,right:b.right,height:b.height,clientW:s.clientWidth,scrollW:s.scrollWidth,tableH:t.offsetHeight});});
var p=document.createElement("pre");p.id="probe";p.textContent=JSON.stringify(out);document.body.appendChild(p);})();</script>`

// probed is what probeJS read back.
type probed struct {
	Charts []struct {
		ID         string      `json:"id"`
		Texts      []string    `json:"texts"`
		Inverse    bool        `json:"inverse"`
		Grid       []float64   `json:"grid"`
		Scale      []float64   `json:"scale"`
		ScaleTexts []string    `json:"scaleTexts"`
		Series     []probedSer `json:"series"`
	} `json:"charts"`
	Boxes []struct {
		Table                                   string
		Right, Height, ClientW, ScrollW, TableH float64
	} `json:"boxes"`
	Width, Height float64
}

type probedSer struct {
	Type  string  `json:"type"`
	Links [][]any `json:"links"`
	Edges [][]any `json:"edges"`
	Cells [][]any `json:"cells"`
}

// drawPage writes p as the report does, with probeJS before </body>,
// opens it in headless Chromium (width × height) and returns what the
// probe read; a screenshot of the page goes to out/ for a person.
func drawPage(t *testing.T, p Page) probed {
	t.Helper()
	browser := browsertest.Chromium(t)
	var b bytes.Buffer
	if err := WriteHTML(&b, p); err != nil {
		t.Fatal(err)
	}
	i := strings.LastIndex(b.String(), "</body>")
	page := b.String()[:i] + probeJS + b.String()[i:]
	file := filepath.Join(t.TempDir(), "page.html")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, console := browsertest.DumpDOM(t, browser, file, 5*time.Second)
	if len(console) > 0 {
		t.Errorf("the page wrote to the console: %q", console)
	}
	m := regexp.MustCompile(`(?s)<pre id="probe">(.*?)</pre>`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatal("the probe did not run")
	}
	var out probed
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// The figures a person sees, read back from Chromium: every flow of the
// flip-point table is laid out (the flow of 0 items and the ones after
// it), every heatmap cell carries its label, the CLC reference is drawn
// above the diagonal, the colour scales sit beside their plots with
// their ends written, an empty figure says why, and a wide, long table
// scrolls inside its box.
func TestFiguresDrawWhatTheTablesHold(t *testing.T) {
	answers := table("answers", []string{"model", "item", "language", "prompt", "response", "gold"})
	for i := range 120 {
		answers.Rows = append(answers.Rows, []any{"m", fmt.Sprint(i), "hin", strings.Repeat("a long prompt ", 20), "an-unbreakable-response-" + strings.Repeat("x", 300), "gold"})
	}
	figs := append(drawn(t, "browser"), drawn(t, "browser_empty")...)
	p := drawPage(t, Page{Title: "figures", Figures: figs, Tables: []*tables.Table{answers}})
	if len(p.Charts) != len(figs) {
		t.Fatalf("%d charts on the page, %d figures", len(p.Charts), len(figs))
	}
	checked := map[string]bool{}
	for i, c := range p.Charts {
		f := figs[i]
		texts := strings.ReplaceAll(strings.Join(c.Texts, "|"), "\n", " ")
		switch {
		case f.Name == "flip_points_m":
			checked["sankey"] = true
			s := c.Series[0]
			want := [][]any{{"wrong at baseline", "right under TinT-CM", 1.0}, {"wrong at baseline", "still wrong", 6.0},
				{"still wrong", "right under TinT-EN", 0.0}, {"still wrong", "wrong throughout", 6.0}}
			if fmt.Sprint(s.Links) != fmt.Sprint(want) {
				t.Errorf("the chart holds the links %v, the table %v", s.Links, want)
			}
			perItem := math.NaN()
			for _, e := range s.Edges {
				for _, x := range e[2:] {
					if x == nil {
						t.Errorf("flow %v→%v is not laid out: %v", e[0], e[1], e)
					}
				}
				if v, dy := e[2], e[3]; v != nil && dy != nil && v.(float64) > 0 {
					if math.IsNaN(perItem) {
						perItem = dy.(float64) / v.(float64)
					} else if math.Abs(dy.(float64)/v.(float64)-perItem) > 1e-6 {
						t.Errorf("flow %v→%v: %v px for %v items, others %v px an item", e[0], e[1], dy, v, perItem)
					}
				}
			}
			for _, l := range []string{"wrong at baseline: 7", "right under TinT-CM: 1", "still wrong: 6", "right under TinT-EN: 0", "wrong throughout: 6"} {
				if !strings.Contains(texts, l) {
					t.Errorf("the Sankey does not draw the label %q (it draws %q)", l, c.Texts)
				}
			}
		case strings.HasPrefix(f.Name, "clc_m_"), strings.HasPrefix(f.Name, "domains_"):
			checked[f.Name[:3]] = true
			if !c.Inverse {
				t.Errorf("%s: the y axis runs bottom-up", f.Name)
			}
			if len(c.Grid) != 4 || len(c.Scale) != 4 || c.Scale[0] < c.Grid[0]+c.Grid[2] {
				t.Errorf("%s: the colour scale %v covers the plot %v", f.Name, c.Scale, c.Grid)
			}
			lo, hi := "0.00", "0.60"
			if f.Name[:3] == "dom" {
				hi = "1.00"
			}
			if !slices.Contains(c.ScaleTexts, lo) || !slices.Contains(c.ScaleTexts, hi) {
				t.Errorf("%s: the colour scale writes %q, not its ends %s and %s", f.Name, c.ScaleTexts, lo, hi)
			}
			drawn := map[string]string{}
			ys := map[string]float64{}
			for _, s := range c.Series {
				for _, cell := range s.Cells {
					if cell[2] == nil {
						t.Errorf("%s: cell %v/%v has no label", f.Name, cell[0], cell[1])
					}
					key := fmt.Sprint(cell[0], "/", cell[1])
					drawn[key], ys[key] = fmt.Sprint(cell[2]), cell[4].(float64)
				}
			}
			want := map[string]string{"hin/History": "0.75", "eng/History": "0.50", "hin/Politics": "0.25"}
			if f.Name[:3] == "clc" {
				want = map[string]string{"ben/ben": "1", "hin/ben": "0.25", "tam/ben": "0.50", "ben/hin": "0.20", "hin/hin": "1", "tam/hin": "0.60",
					"ben/tam": "0.00", "hin/tam": "n/a", "tam/tam": "1"}
				for _, l := range []string{"ben", "hin", "tam"} { // (col/row): the reference (row < col) above the diagonal cell of its column
					for _, r := range []string{"ben", "hin", "tam"} {
						above := ys[l+"/"+r] < ys[l+"/"+l]
						if r < l && !above || r > l && above {
							t.Errorf("clc: the cell of row %s, column %s is drawn %s the diagonal (y %v, diagonal %v)", r, l, map[bool]string{true: "above", false: "below"}[above], ys[l+"/"+r], ys[l+"/"+l])
						}
					}
				}
			}
			if fmt.Sprint(drawn) != fmt.Sprint(want) {
				t.Errorf("%s: drawn labels %v, want %v", f.Name, drawn, want)
			}
		case f.Name == "clc":
			checked["empty"] = true
			if !strings.Contains(texts, "Nothing to draw: no language pairs: CLC compares two languages of the same form") {
				t.Errorf("the empty CLC figure draws %q", c.Texts)
			}
		}
	}
	if len(checked) != 4 {
		t.Errorf("checked %v: a figure is missing", checked)
	}
	if len(p.Boxes) != 1 {
		t.Fatalf("%d table boxes", len(p.Boxes))
	}
	b := p.Boxes[0]
	if b.Right > p.Width+0.5 || b.ScrollW <= b.ClientW || b.Height >= b.TableH || b.Height > p.Height {
		t.Errorf("the answers table's box %+v in a page %v × %v: it must end inside the page, scroll sideways, and be short enough that its scroll bar shows", b, p.Width, p.Height)
	}
}
