// The "Compare machines" page: puts the headline figures of a results file the reader
// chooses beside the figures this page was built with. Nothing leaves the browser: the
// file is read with FileReader and no request is made, so the page works offline, from
// file://, and on the published site alike. Text from the file only ever becomes text
// (textContent), never markup. (The body of the wrapper is not indented, so that the
// book can show its parts as listings.)
(function () {
'use strict';
// The format and version this book writes, and every figure's text, come with the
// figures this page was built with (`all-results table compare-data`): nothing here
// re-derives them.

// A figure as the book writes it: its median and 95 % interval, in its unit.
function estimate(f) {
  return f.shown || (f.median + ' ' + f.unit);
}

// A ratio to three significant digits (whole above 1,000).
function ratio(r) {
  return (r < 1000 ? r.toPrecision(3) : String(Math.round(r))) + '×';
}

// ANCHOR: rule
// The book's verdict rule for figures measured apart (two machines cannot be paired
// round by round), with its threshold, least rounds and words taken from the page's
// data (`rule`, written by the book's one verdict type): a clear difference only when
// both figures rest on enough rounds, their intervals do not overlap and their medians
// differ by more than the threshold.
function difference(a, b, rule) {
  var apart = a.hi < b.lo || b.hi < a.lo;
  if (a.rounds < rule.min_rounds || b.rounds < rule.min_rounds || !apart) {
    return rule.words.unclear;
  }
  var d = Math.abs(a.median - b.median);
  var base = Math.min(Math.abs(a.median), Math.abs(b.median));
  var relative = d === 0 ? 0 : (base === 0 ? Infinity : d / base);
  return relative > rule.threshold ? rule.words.clear : rule.words.same;
}
// ANCHOR_END: rule

function cell(row, text, header) {
  var c = document.createElement(header ? 'th' : 'td');
  c.textContent = text;
  row.appendChild(c);
}

function params(f) {
  return Object.keys(f.params).sort().map(function (k) { return k + ' = ' + f.params[k]; }).join(', ');
}

// ANCHOR: row
// One headline figure: this book's, the file's, the ratio of the medians, the verdict.
// Figures measured with other parameters are shown, not compared.
function figureRow(name, mine, theirs, rule) {
  var row = document.createElement('tr');
  cell(row, name);
  cell(row, mine ? estimate(mine) : '–');
  cell(row, theirs ? estimate(theirs) : '–');
  cell(row, mine && theirs && mine.median > 0 ? ratio(theirs.median / mine.median) : '–');
  var verdict = 'only in one';
  if (mine && theirs) {
    verdict = params(mine) !== params(theirs)
      ? 'not comparable: other parameters (' + params(mine) + ' / ' + params(theirs) + ')'
      : difference(mine, theirs, rule);
  }
  cell(row, verdict);
  return row;
}
// ANCHOR_END: row

function render(out, mine, theirs, fileName) {
  var say = function (text) {
    var p = document.createElement('p');
    p.textContent = text;
    out.appendChild(p);
  };
  out.textContent = '';
  say('This book: ' + mine.machine + ' (built ' + mine.generated_at + ').');
  say(fileName + ': ' + theirs.machine + ' (generated ' + theirs.generated_at + ').');
  var table = document.createElement('table');
  var head = document.createElement('tr');
  ['figure', 'this book', fileName, 'file ÷ book', 'difference'].forEach(function (h) {
    cell(head, h, true);
  });
  table.appendChild(head);
  // Matched by name through maps: linear in the size of the file (a name given twice
  // counts once, its first figure).
  var index = function (list) {
    var m = new Map();
    list.forEach(function (f) { if (!m.has(f.name)) { m.set(f.name, f); } });
    return m;
  };
  var inMine = index(mine.figures);
  var inTheirs = index(theirs.figures);
  var names = Array.from(inMine.keys());
  inTheirs.forEach(function (f, name) {
    if (!inMine.has(name)) { names.push(name); }
  });
  names.forEach(function (name) {
    table.appendChild(figureRow(name, inMine.get(name), inTheirs.get(name), mine.rule));
  });
  var wrap = document.createElement('div');
  wrap.className = 'table-wrapper';
  wrap.appendChild(table);
  out.appendChild(wrap);
}

// The schema the book's own `all-results` checks: names of lower-case letters, digits
// and `-`; a unit from the known set; finite numbers no larger than 1e18 with
// lo ≤ median ≤ hi. The first figure that breaks it refuses the whole file.
var UNITS = ['ns', 'bytes', 'ops/s', '1'];
var NAME = /^[a-z0-9][a-z0-9-]{0,63}$/;
function number(x) {
  return typeof x === 'number' && isFinite(x) && Math.abs(x) <= 1e18;
}
function problem(doc) {
  if (!Array.isArray(doc.figures)) { return 'it has no list of figures'; }
  if (typeof doc.machine !== 'string' || typeof doc.generated_at !== 'string') {
    return 'it does not say which machine made it, or when';
  }
  if (/[\u0000-\u001f\u007f-\u009f]/.test(doc.machine + doc.generated_at)) {
    return 'its machine line or date holds control characters';
  }
  for (var i = 0; i < doc.figures.length; i += 1) {
    var f = doc.figures[i];
    if (!f || typeof f.name !== 'string' || !NAME.test(f.name)) {
      return 'figure ' + (i + 1) + ' has no valid name';
    }
    if (UNITS.indexOf(f.unit) < 0) {
      return 'the figure ' + f.name + ' has an unknown unit';
    }
    if (!number(f.median) || !number(f.lo) || !number(f.hi)) {
      return 'the figure ' + f.name + ' has a median or interval that is not a number';
    }
    if (!(f.lo <= f.median && f.median <= f.hi)) {
      return 'the figure ' + f.name + ' has an interval that does not hold its median';
    }
    if (!f.params || typeof f.params !== 'object' || Array.isArray(f.params)) {
      return 'the figure ' + f.name + ' has no parameters object';
    }
  }
  return null;
}

// ANCHOR: read
// Reads the chosen file here, in the browser, and refuses another format or version.
function compareFile(file, mine, out) {
  var reader = new FileReader();
  reader.onload = function () {
    try {
      var doc = JSON.parse(reader.result);
      if (doc.format !== mine.format) {
        throw new Error(doc.results ? 'it was written by an older version of the book; publish it again'
          : 'it is not a results file of this book');
      }
      if (doc.version !== mine.version) {
        throw new Error('it has results format ' + doc.version + ', this page reads ' + mine.version);
      }
      var why = problem(doc);
      if (why) { throw new Error(why); }
      render(out, mine, doc, file.name);
    } catch (e) {
      out.textContent = 'Cannot compare ' + file.name + ': ' + e.message + '.';
    }
  };
  reader.onerror = function () { out.textContent = 'Cannot read ' + file.name + '.'; };
  reader.readAsText(file);
}
// ANCHOR_END: read

var input = document.getElementById('cow-compare-file');
var built = document.getElementById('cow-built-figures');
var out = document.getElementById('cow-compare-result');
if (!input || !built || !out) {
  return; // every page loads this script; only the compare page has these
}
var mine = JSON.parse(built.textContent);
if (!mine.rule || !mine.rule.words) {
  out.textContent = 'This page was built without the verdict rule; build the book again.';
  return;
}
input.addEventListener('change', function () {
  if (input.files && input.files[0]) { compareFile(input.files[0], mine, out); }
});
}());
