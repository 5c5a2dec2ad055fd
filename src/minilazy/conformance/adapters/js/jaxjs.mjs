// jax-js (@jax-js/jax, its Wasm backend) as an implementation under test, over the oracle's
// process protocol (spec/protocol.md):
//
//     python -m minilazy.conformance --lazy-command "node src/minilazy/conformance/adapters/js/jaxjs.mjs"
//
// How jax-js's laziness maps onto the protocol. An op on arrays records a kernel (a
// `PendingExecute`) or, on constants, an expression, and returns at once; nothing is compiled or
// run until a value is read (`dataSync`), which compiles (Wasm, cached by kernel hash) and runs
// what that value needs. So an observation is `x.ref.dataSync()`, `sync(*xs)` and the barrier are
// the same read of each named (barrier: each live) tensor, its value thrown away: jax-js's only
// synchronous way to make an array ready (`blockUntilReady` is async, and the protocol's calls
// are answered synchronously). Shapes and dtypes are known at record time (`metadata`);
// float64 exists (`float64`, but no int64: jax-js has bool, int32, uint32, float32, float64).
// jax-js keeps no counters and has no public pending flag (capability `pending` is not declared);
// the counts are observed where jax-js runs and compiles programs: every `dispatch` of its Wasm
// and CPU backends is an execution (the CPU backend evaluates small constant expressions at a
// read), and a Wasm kernel whose program was not in jax-js's program cache is a compile (a
// program object not seen before), else a cache hit. These hooks use jax-js's internal backend
// module (pinned version 0.1.25); without it the counts are not declared.
//
// jax-js arrays are moved into every op (reference counts): a tensor of the protocol is a Box
// owning one reference, and an op gets `box.a.ref`. `x op= y` and `x[key] = v` rebind the box
// (`setitem`). jax-js has no in-place ops and no scatter: `x op= y` is `x = op(x, y)` kept in
// x's dtype as NumPy's same_kind casting does, and `x[key] = v` is a `where` over the positions
// the key selects, found by indexing an `arange` of x's flat positions with the same key.
// Convolution and pooling (`conv`) are `lax.convGeneralDilated` and `lax.reduceWindow`; the two
// devices jax-js has in Node, "wasm" (the default) and "cpu", are capability `devices`. jax-js
// has no qr, pinv or matrix_rank and an unstable sort (no `linalg`), no complex dtype (no `fft`), no
// auto-cut, cache keys or eager mode.
//
// The adapter translates spelling only: NumPy's dtypes and Python's keys, slices and axes to
// jax-js's, Python's int/float/bool literals (which JavaScript numbers cannot tell apart) to the
// dtype NumPy would give them where a jax-js function takes a dtype, Array API keywords to
// jax-js's. It never fixes a value: wrong values, dtypes and errors are jax-js's
// (docs/findings/jaxjs_*.mjs).

// Node 20 has no Float16Array, which jax-js uses unguarded: a stub before jax-js loads (so its
// `instanceof` checks work); float16 stays unavailable.
if (typeof globalThis.Float16Array === "undefined") {
  globalThis.Float16Array = class Float16Array {
    constructor() { throw new Error("float16 is unavailable: Node has no Float16Array"); }
  };
}
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { serve, PyError, PyFloat, Tuple, Slice, DType, ELLIPSIS, NdArray } from "./protocol.mjs";

const jax = await import("@jax-js/jax");  // after the stub
const np = jax.numpy;
const DIST = dirname(createRequire(import.meta.url).resolve("@jax-js/jax"));
const VERSION = JSON.parse(readFileSync(join(DIST, "..", "package.json"), "utf8")).version;

// -- counts: executions and compiles, observed at jax-js's backends -----------------------------
const count = { executions: 0, compiles: 0, cache_hits: 0 };
let counted = false;
try {
  const chunk = readdirSync(DIST).find((f) => /^backend-.*\.js$/.test(f));
  const mod = await import(pathToFileURL(join(DIST, chunk)).href);  // the module index.js uses
  const getBackend = Object.values(mod).find((f) => typeof f === "function" && f.name === "getBackend");
  const seen = new WeakSet();  // compiled programs: a new one is a compile
  for (const device of ["wasm", "cpu"]) {
    const backend = getBackend(device);
    const dispatch = backend.dispatch.bind(backend);
    backend.dispatch = (...args) => { count.executions++; return dispatch(...args); };
    if (device !== "wasm") continue;
    const prepare = backend.prepareKernelSync.bind(backend);
    backend.prepareKernelSync = (kernel) => {
      const exe = prepare(kernel);
      const program = exe.data.program;
      if (seen.has(program)) count.cache_hits++; else { seen.add(program); count.compiles++; }
      return exe;
    };
  }
  counted = jax.defaultDevice() === "wasm";
} catch (e) {
  process.stderr.write(`jaxjs.mjs: no counts (${e.message})\n`);
}

// -- tensors: a box owns one reference to a jax-js array ----------------------------------------
class Box { constructor(a) { this.a = a; } }
// The live boxes a barrier materialises: a box the oracle frees leaves (`release`), so a barrier
// never computes a dead tensor (LZ-BAR-003); `isolate` forgets the earlier tests' boxes.
const tracked = new Set();
const box = (a) => { const b = new Box(a); tracked.add(b); return b; };

// -- dtypes -------------------------------------------------------------------------------------
const DTYPES = { bool: np.bool, int32: np.int32, uint32: np.uint32, float32: np.float32, float64: np.float64 };
const TYPED = { bool: Int32Array, int32: Int32Array, uint32: Uint32Array, float32: Float32Array, float64: Float64Array };
function jdtype(d) {
  const name = d instanceof DType ? d.name : String(d);
  if (!(name in DTYPES)) throw new PyError("TypeError", `jax-js has no dtype ${name}`);
  return DTYPES[name];
}
// NumPy's same_kind casting among these dtypes: from a to b where RANK[a] <= RANK[b].
const RANK = { bool: 0, uint32: 1, int32: 2, float32: 3, float64: 3 };
const isFloat = (d) => d === "float32" || d === "float64";

// -- values in and out --------------------------------------------------------------------------
function fromNd(nd) {
  const { dtype, shape } = nd;
  let { data } = nd;
  const dt = jdtype(dtype);
  if (dtype === "bool") data = Int32Array.from(data, (v) => (v ? 1 : 0));
  else data = new TYPED[dtype](data);  // a copy: the host array may change later (LZ-REC-007)
  // np.array() of empty float data fails in jax-js 0.1.25 ("Expected a number for constant"): an
  // empty array holds no data, so it is np.zeros of its shape (jaxjs_array_creation.mjs).
  if (data.length === 0) return np.zeros([...shape], { dtype: dt });
  return np.array(data, { shape: [...shape], dtype: dt });
}

function read(a) {  // the values of array a (not consumed), as a typed array of its dtype
  const data = a.ref.dataSync();
  return a.dtype === "bool" ? Uint8Array.from(data, (v) => (v ? 1 : 0)) : new TYPED[a.dtype](data);
}

// An operand: a tensor, a Python scalar (weak in jax-js too), or a host array.
function operand(v) {
  if (v instanceof Box) return v.a.ref;
  if (v instanceof PyFloat) return v.value;
  if (typeof v === "number" || typeof v === "boolean") return v;
  if (v instanceof NdArray) return fromNd(v);
  throw new PyError("TypeError", `unsupported operand ${v === null ? "None" : typeof v === "string" ? `'${v}' (str)` : String(v)}`);
}
const tensor = (v) => (v instanceof Box ? v.a.ref : fromNd(v));

// Integers where the Array API takes them (shapes, axes, sizes). A whole Python float (3.0) has
// no JavaScript spelling apart from the int 3, so that call cannot be written in jax-js: refused
// as Python refuses it. A fractional one (2.5) is a JS number jax-js is given, to check it.
function int(v, what = "an axis or size") {
  if (typeof v === "number" && Number.isInteger(v)) return v;
  if (typeof v === "boolean") return Number(v);
  if (v instanceof PyFloat && !Number.isInteger(v.value)) return v.value;
  throw new PyError("TypeError", `${what} must be an integer, not ${v instanceof PyFloat ? "float" : v === null ? "None" : typeof v}`);
}
const ints = (v, what) => (Array.isArray(v) ? v.map((x) => int(x, what)) : [int(v, what)]);
const axis = (v) => (v === null || v === undefined ? null : Array.isArray(v) ? ints(v, "an axis") : int(v, "an axis"));

// The dtype NumPy gives a Python scalar or nested list of them (under the policy's defaults).
function literalDtype(v) {
  const flat = Array.isArray(v) ? v.flat(Infinity) : [v];
  if (flat.length === 0 || flat.some((x) => x instanceof PyFloat)) return np.float32;
  if (flat.every((x) => typeof x === "boolean")) return np.bool;
  return np.int32;
}
// Python numbers as JS ones; a bool among numbers is the number it stands for, as in Python.
const literal = (v, numeric = Array.isArray(v) && !v.flat(Infinity).every((x) => typeof x === "boolean")) =>
  Array.isArray(v) ? v.map((x) => literal(x, numeric)) : v instanceof PyFloat ? v.value
    : numeric && typeof v === "boolean" ? Number(v) : v;
function nestedShape(v) { const s = []; while (Array.isArray(v)) { s.push(v.length); v = v[0]; } return s; }

// -- indexing -----------------------------------------------------------------------------------
function sliceIndices(s, n) {  // Python's slice.indices(n)
  const step = s.step === null ? 1 : int(s.step, "a slice step");
  if (step === 0) throw new PyError("ValueError", "slice step cannot be zero");
  const [lo, hi] = step > 0 ? [0, n] : [-1, n - 1];
  const at = (v, d) => (v === null ? d : int(v, "a slice index") < 0 ? Math.max(v + n, lo) : Math.min(v, hi));
  const start = at(s.start, step > 0 ? lo : hi), stop = at(s.stop, step > 0 ? hi : lo);
  const len = Math.max(0, Math.ceil((stop - start) / step));
  return { start, stop, step, len };
}
const indexArray = (values, shape) =>
  values.length === 0 ? np.zeros(shape, { dtype: np.int32 }) : np.array(Int32Array.from(values), { shape, dtype: np.int32 });
const isIndexArray = (k) => k instanceof Box || Array.isArray(k) || k instanceof NdArray;

// x[key] with NumPy's semantics, spelt as jax-js's `slice` (ints, [start, stop], null, index
// arrays; NumPy's placement of advanced indices) plus `take` for slices with a step. Consumes x.
function getitem(x, key) {
  const items = key instanceof Tuple ? [...key] : [key];
  for (const k of items) {
    if (!(typeof k === "number" || k === null || k === ELLIPSIS || k instanceof Slice || isIndexArray(k))) {
      throw new PyError("IndexError", "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or boolean arrays are valid indices");
    }
  }
  if (items.filter((k) => k === ELLIPSIS).length > 1) throw new PyError("IndexError", "an index can only have a single ellipsis ('...')");
  const used = items.filter((k) => k !== null && k !== ELLIPSIS).length;
  if (used > x.ndim) throw new PyError("IndexError", `too many indices for array: array is ${x.ndim}-dimensional, but ${used} were indexed`);
  // Expand `...` (a marker remains where it stood: NumPy counts it between advanced indices).
  const e = items.indexOf(ELLIPSIS);
  const full = () => new Slice(null, null, null);
  const expanded = e < 0 ? [...items, ...Array.from({ length: x.ndim - used }, full)]
    : [...items.slice(0, e), "...", ...Array.from({ length: x.ndim - used }, full), ...items.slice(e + 1)];
  // Slices with a step: a take of their indices, on the input's axis.
  let y = x, dim = 0;
  const args = [];
  for (const k of expanded) {
    if (k === "..." ) continue;
    if (k === null) { args.push(null); continue; }
    const n = x.shape[dim];
    if (k instanceof Slice) {
      const { start, stop, step, len } = sliceIndices(k, n);
      if (step === 1) args.push([start, Math.max(start, stop)]);
      else {
        y = np.take(y, indexArray(Array.from({ length: len }, (_, i) => start + i * step), [len]), dim);
        args.push([]);
      }
    } else if (typeof k === "number") args.push(k);
    else if (k instanceof Box) args.push(k.a.ref);
    else if (k instanceof NdArray) args.push(fromNd(k));
    else args.push(indexArray(k.flat(Infinity).map((v) => int(v, "an index")), nestedShape(k)));
    dim++;
  }
  let out = y.slice(...args);
  // NumPy puts the broadcast index dimensions first when advanced indices (arrays, and ints among
  // them) are not adjacent in the key, an `...` of no axes between them included; jax-js's
  // `slice` counts only its own arguments. Move them where NumPy has them.
  const tensors = args.filter((a) => a instanceof jax.Array);
  if (tensors.length) {
    const adv = expanded.map((k, i) => (typeof k === "number" || isIndexArray(k) ? i : -1)).filter((i) => i >= 0);
    const numpyFirst = adv[adv.length - 1] - adv[0] !== adv.length - 1;
    const jaxAdv = args.map((k, i) => (typeof k === "number" || k instanceof jax.Array ? i : -1)).filter((i) => i >= 0);
    const jaxFirst = jaxAdv[jaxAdv.length - 1] - jaxAdv[0] !== jaxAdv.length - 1;
    if (numpyFirst && !jaxFirst) {
      const before = args.slice(0, jaxAdv[0]).filter((k) => !(typeof k === "number")).length;
      const nb = np.broadcastShapes(...tensors.map((t) => t.shape)).length;
      const perm = [...Array(out.ndim).keys()];
      perm.splice(before, nb);
      out = np.transpose(out, [...Array.from({ length: nb }, (_, i) => before + i), ...perm]);
    }
  }
  return out;
}

// x[key] = value: positions = arange(x.size) indexed by key; each position of x takes the value
// whose selected position equals it (no index repeats, as the spec's tests keep), or keeps x's.
function setitem(b, key, value) {
  const x = b.a, shape = x.shape, n = x.size;
  const sel = getitem(np.arange(0, n, 1, { dtype: np.int32 }).reshape(shape), key);
  const s = sel.shape, m = sel.size;
  let v;
  if (value instanceof Box || value instanceof NdArray) v = np.astype(tensor(value), x.dtype);
  else {  // a Python scalar: made in x's dtype where its kind fits, else in its own, then cast
    const kind = typeof value === "boolean" ? "bool" : value instanceof PyFloat ? "float" : "int";
    const xKind = x.dtype === "bool" ? "bool" : isFloat(x.dtype) ? "float" : "int";
    const own = { bool: np.bool, int: np.int32, float: np.float64 }[kind];
    v = kind === xKind || (kind === "int" && xKind === "float") ? np.full([], scalar(value), { dtype: x.dtype })
      : np.astype(np.full([], scalar(value), { dtype: own }), x.dtype);
  }
  // NumPy drops leading unit axes of a value with more axes than the selection.
  while (v.ndim > s.length && v.shape[0] === 1) v = v.reshape(v.shape.slice(1));
  if (v.ndim > s.length) throw new PyError("ValueError", `could not broadcast input array from shape (${v.shape}) into shape (${s})`);
  v = np.broadcastTo(v, s);
  if (m === 0) { sel.dispose(); v.dispose(); return b; }
  const eq = np.equal(np.arange(0, n, 1, { dtype: np.int32 }).reshape([n, 1]), sel.reshape([1, m]));
  const hit = np.any(eq.ref, 1);
  const which = np.argmax(eq, 1);
  const updated = np.where(hit, np.take(v.reshape([m]), which, 0), x.ref.reshape([n]));
  b.a = updated.reshape(shape);
  x.dispose();
  return b;
}

// -- ops ----------------------------------------------------------------------------------------
const UNARY = {
  negative: np.negative, abs: np.abs, sign: np.sign, sqrt: np.sqrt, square: np.square, exp: np.exp,
  expm1: np.expm1, log: np.log, log1p: np.log1p, log2: np.log2, log10: np.log10, sin: np.sin,
  cos: np.cos, tan: np.tan, asin: np.arcsin, acos: np.arccos, atan: np.arctan, sinh: np.sinh,
  cosh: np.cosh, tanh: np.tanh, asinh: np.arcsinh, acosh: np.arccosh, atanh: np.arctanh,
  floor: np.floor, ceil: np.ceil, round: np.round, trunc: np.trunc, logical_not: np.logicalNot,
  bitwise_invert: np.bitwiseInvert, isnan: np.isnan, isinf: np.isinf, isfinite: np.isfinite,
  stop_gradient: jax.lax.stopGradient, matrix_transpose: np.matrixTranspose,
};
const BINARY = {
  add: np.add, subtract: np.subtract, multiply: np.multiply, divide: np.divide,
  floor_divide: np.floorDivide, remainder: np.remainder, pow: np.power, maximum: np.maximum,
  minimum: np.minimum, atan2: np.arctan2, equal: np.equal, not_equal: np.notEqual, less: np.less,
  less_equal: np.lessEqual, greater: np.greater, greater_equal: np.greaterEqual,
  logical_and: np.logicalAnd, logical_or: np.logicalOr, logical_xor: np.logicalXor,
  bitwise_and: np.bitwiseAnd, bitwise_or: np.bitwiseOr, bitwise_xor: np.bitwiseXor,
  bitwise_left_shift: np.leftShift, bitwise_right_shift: np.rightShift, matmul: np.matmul,
};
const cast = (a, dtype) => (dtype === null || dtype === undefined ? a : np.astype(a, jdtype(dtype)));
const keep = (p) => ({ keepdims: Boolean(p.keepdims) });
const shapeArg = (v) => ints(v, "a shape entry");
const dtypeOr = (d, otherwise) => (d != null ? jdtype(d) : otherwise);
const optional = (v) => (v === null || v === undefined ? undefined : operand(v));
function scalar(v) {
  if (v instanceof PyFloat) return v.value;
  if (typeof v === "number" || typeof v === "boolean") return v;
  throw new PyError("TypeError", `expected a number, got ${v === null ? "None" : typeof v}`);
}

// Each op takes its parameters by the Array API names ops.toml gives (see `bind`).
const OPS = {
  where: (p) => np.where(operand(p.condition), operand(p.x1), operand(p.x2)),
  clip: (p) => np.clip(operand(p.x), optional(p.min), optional(p.max)),
  astype: (p) => np.astype(tensor(p.x), jdtype(p.dtype)),
  sum: (p) => np.sum(cast(tensor(p.x), p.dtype), axis(p.axis), keep(p)),
  prod: (p) => np.prod(cast(tensor(p.x), p.dtype), axis(p.axis), keep(p)),
  mean: (p) => np.mean(tensor(p.x), axis(p.axis), keep(p)),
  max: (p) => np.max(tensor(p.x), axis(p.axis), keep(p)),
  min: (p) => np.min(tensor(p.x), axis(p.axis), keep(p)),
  any: (p) => np.any(tensor(p.x), axis(p.axis), keep(p)),
  all: (p) => np.all(tensor(p.x), axis(p.axis), keep(p)),
  var: (p) => np.var_(tensor(p.x), axis(p.axis), { ...keep(p), correction: scalar(p.correction) }),
  std: (p) => np.std(tensor(p.x), axis(p.axis), { ...keep(p), correction: scalar(p.correction) }),
  argmax: (p) => np.argmax(tensor(p.x), p.axis === null ? undefined : int(p.axis), keep(p)),
  argmin: (p) => np.argmin(tensor(p.x), p.axis === null ? undefined : int(p.axis), keep(p)),
  cumulative_sum: (p) => np.cumulativeSum(cast(tensor(p.x), p.dtype),
    { axis: p.axis === null ? undefined : int(p.axis), includeInitial: Boolean(p.include_initial) }),
  tensordot: (p) => np.tensordot(tensor(p.x1), tensor(p.x2),
    Array.isArray(p.axes) ? p.axes.map((s) => ints(s, "an axis")) : int(p.axes, "axes")),
  reshape: (p) => np.reshape(tensor(p.x), shapeArg(p.shape)),
  permute_dims: (p) => np.transpose(tensor(p.x), ints(p.axes, "an axis")),
  expand_dims: (p) => np.expandDims(tensor(p.x), axis(p.axis)),
  squeeze: (p) => np.squeeze(tensor(p.x), axis(p.axis)),
  broadcast_to: (p) => np.broadcastTo(tensor(p.x), shapeArg(p.shape)),
  flip: (p) => np.flip(tensor(p.x), axis(p.axis)),
  tril: (p) => np.tril(tensor(p.x), int(p.k, "k")),
  triu: (p) => np.triu(tensor(p.x), int(p.k, "k")),
  // NumPy's axis=None flattens every array first (jax-js's concatenate takes no null axis).
  concat: (p) => (p.axis === null ? np.concatenate(p.arrays.map((x) => np.ravel(tensor(x))), 0)
    : np.concatenate(p.arrays.map(tensor), int(p.axis))),
  stack: (p) => np.stack(p.arrays.map(tensor), int(p.axis)),
  take: (p) => np.take(tensor(p.x), tensor(p.indices), p.axis === null ? null : int(p.axis)),
  take_along_axis: (p) => np.takeAlongAxis(tensor(p.x), tensor(p.indices), int(p.axis)),
  getitem: (p) => getitem(tensor(p.x), p.key),
  asarray: (p) => {
    if (p.obj instanceof Box || p.obj instanceof NdArray) return cast(tensor(p.obj), p.dtype);
    const dtype = dtypeOr(p.dtype, literalDtype(p.obj));
    if (Array.isArray(p.obj) && p.obj.flat(Infinity).length === 0) return np.zeros(nestedShape(p.obj), { dtype });
    return np.array(literal(p.obj), { dtype });
  },
  zeros: (p) => np.zeros(shapeArg(p.shape), { dtype: dtypeOr(p.dtype) }),
  ones: (p) => np.ones(shapeArg(p.shape), { dtype: dtypeOr(p.dtype) }),
  full: (p) => np.full(shapeArg(p.shape), p.fill_value instanceof Box ? p.fill_value.a.ref : literal(p.fill_value),
    { dtype: dtypeOr(p.dtype, p.fill_value instanceof Box ? undefined : literalDtype(p.fill_value)) }),
  eye: (p) => {
    const n = int(p.n_rows), m = p.n_cols === null ? n : int(p.n_cols), k = int(p.k, "k");
    const dtype = dtypeOr(p.dtype, np.float32);
    if (k === 0) return np.eye(n, m, { dtype });
    // jax-js's eye has no k: the diagonal k is tri(k) without tri(k - 1).
    return np.astype(np.logicalXor(np.tri(n, m, k, { dtype: np.bool }), np.tri(n, m, k - 1, { dtype: np.bool })), dtype);
  },
  arange: (p) => {
    const [a, b] = p.stop === null ? [0, p.start] : [p.start, p.stop];
    return np.arange(scalar(a), scalar(b), scalar(p.step), { dtype: dtypeOr(p.dtype, literalDtype([a, b, p.step])) });
  },
  linspace: (p) => np.linspace(scalar(p.start), scalar(p.stop), int(p.num, "num"), Boolean(p.endpoint),
    { dtype: dtypeOr(p.dtype) }),
  zeros_like: (p) => np.zerosLike(tensor(p.x), { dtype: dtypeOr(p.dtype) }),
  ones_like: (p) => np.onesLike(tensor(p.x), { dtype: dtypeOr(p.dtype) }),
  full_like: (p) => np.fullLike(tensor(p.x), literal(p.fill_value), { dtype: dtypeOr(p.dtype) }),
};
for (const [name, f] of Object.entries(UNARY)) OPS[name] = (p) => f(operand(p.x));
for (const [name, f] of Object.entries(BINARY)) OPS[name] = (p) => f(operand(p.x1), operand(p.x2));

// The registry's signatures (ops.toml): positional and keyword arguments bound to names, the
// defaults filled in, as Python would bind them, except that positional arguments past the
// positional parameters go to the keyword-only ones in order, as NumPy's functions take them
// (the oracle's programs call `expand_dims(x, 0)`, as `numpy.expand_dims` allows).
const SIGNATURES = {};
{
  const toml = readFileSync(new URL("../../ops.toml", import.meta.url), "utf8");
  for (const [, op, sig] of toml.matchAll(/^\[ops\.(\w+)\][^[]*?^signature = "([^"]*)"/gms)) {
    let kwOnly = false;
    SIGNATURES[op] = [];
    for (const part of sig.split(",").map((t) => t.trim())) {
      if (part === "/") continue;
      if (part === "*") { kwOnly = true; continue; }
      const [name, text] = part.split("=");
      const value = text === undefined ? undefined : text === "None" ? null : text === "True" ? true
        : text === "False" ? false : /^'/.test(text) ? text.slice(1, -1) : Number(text);
      SIGNATURES[op].push({ name, value, required: text === undefined, kwOnly });
    }
  }
}
function bind(op, args, kwargs) {
  const params = SIGNATURES[op] ?? [];
  const order = [...params.filter((q) => !q.kwOnly), ...params.filter((q) => q.kwOnly)];
  if (args.length > order.length) throw new PyError("TypeError", `${op}() takes ${order.length} arguments but ${args.length} were given`);
  const p = {};
  params.forEach((q) => { p[q.name] = q.value; });
  args.forEach((v, i) => { p[order[i].name] = v; });
  for (const [k, v] of Object.entries(kwargs)) {
    if (!params.some((q) => q.name === k)) throw new PyError("TypeError", `${op}() got an unexpected keyword argument '${k}'`);
    p[k] = v;
  }
  for (const q of params) if (p[q.name] === undefined) throw new PyError("TypeError", `${op}() missing required argument '${q.name}'`);
  return p;
}

function wrap(result) {
  if (result instanceof jax.Array) return box(result);
  if (Array.isArray(result)) return Tuple.from(result.map(wrap));
  return result;
}

// -- pooling: jax-js's reduceWindow (no padding of its own: padded with `fill` first) -----------
const hw = (v) => (Array.isArray(v) ? ints(v, "a window size") : [int(v, "a window size"), int(v, "a window size")]);
function pool(x, kernel, stride, padding, reduce, fill) {
  const k = hw(kernel), s = stride === null || stride === undefined ? k : hw(stride), [ph, pw] = hw(padding);
  if (ph || pw) {
    const width = [[0, 0], [0, 0], [ph, ph], [pw, pw]];
    const inside = np.pad(np.onesLike(x.ref, { dtype: np.bool }), width);
    x = fill === 0 ? np.pad(x, width) : np.where(inside, np.pad(x, width), fill);
  }
  return jax.lax.reduceWindow(x, reduce, k, s);
}

// -- converting to Python scalars ---------------------------------------------------------------
function scalarOf(a) {  // the one element of a, as Python sees it (JS number or boolean)
  const v = read(a)[0];
  return a.dtype === "bool" ? Boolean(v) : v;
}

// -- the adapter --------------------------------------------------------------------------------
const adapter = {
  name: "jax-js-wasm",
  version: VERSION,
  capabilities: ["metadata", "setitem", "sync", "float64", "conv", "devices", ...(counted ? ["executions", "compiles", "cache_hits"] : [])],
  methods: ["isolate", "shape", "dtype", "inplace", "sync", "conv2d", "max_pool2d", "avg_pool2d",
    "devices", "to_device", ...(counted ? ["counters"] : [])],
  ops: [...Object.keys(OPS), "setitem"].sort(),
  // jax-js's dtypes; its defaults are JAX's without x64: float32 and int32 (argmax's too).
  // A float function of bool gives the default float, as in JAX's promotion lattice, which
  // jax-js implements (`promoteTypes`); NumPy's float16 (no Float16Array in Node) is not here.
  dtype_policy: { dtypes: ["bool", "int32", "uint32", "float32", "float64"], default_float: "float32",
    default_int: "int32", index: "int32", promotion: { bool: "float32" }, unsupported: [] },

  from_numpy([nd]) { return box(fromNd(nd)); },

  to_numpy([b]) {
    const a = b.a;
    return new NdArray(a.dtype, [...a.shape], read(a));
  },

  apply([op, ...args], kwargs) {
    if (op === "setitem") {
      const p = bind(op, args, kwargs);
      return setitem(p.x, p.key, p.value);
    }
    if (!OPS[op]) throw new PyError("NotImplementedError", `jax-js-wasm has no op ${op}`);
    return wrap(OPS[op](bind(op, args, kwargs)));
  },

  barrier() {
    let failed = null;
    for (const b of tracked) {
      try { if (b.a !== null) b.a.ref.dataSync(); } catch (e) { failed ??= e; }
    }
    if (failed) throw failed;
    return null;
  },

  sync(xs) {
    let failed = null;
    for (const b of xs) { try { b.a.ref.dataSync(); } catch (e) { failed ??= e; } }
    if (failed) throw failed;
    return null;
  },

  isolate() { tracked.clear(); return null; },

  // The oracle dropped its handle on b: nothing will use b again.
  release(b) {
    tracked.delete(b);
    if (b.a !== null && b.a.refCount > 0) b.a.dispose();
    b.a = null;
  },

  counters() { return { ops_recorded: null, ...count, donations: null, fallbacks: null }; },

  shape([b]) { return Tuple.from(b.a.shape); },
  dtype([b]) { return new DType(b.a.dtype); },

  // x op= y: x = op(x, y), in x's dtype and shape as NumPy's in-place ufuncs keep them.
  inplace([op, b, other]) {
    const f = BINARY[op];
    if (!f) throw new PyError("NotImplementedError", `jax-js-wasm has no in-place ${op}`);
    const x = b.a;
    const y = f(x.ref, operand(other));
    if (y.shape.join() !== x.shape.join()) {
      y.dispose();
      throw new PyError("ValueError", `non-broadcastable output operand with shape (${x.shape}) doesn't match the broadcast shape (${y.shape})`);
    }
    if (y.dtype !== x.dtype && RANK[y.dtype] > RANK[x.dtype]) {
      y.dispose();
      throw new PyError("TypeError", `Cannot cast ufunc '${op}' output from dtype('${y.dtype}') to dtype('${x.dtype}') with casting rule 'same_kind'`);
    }
    b.a = y.dtype === x.dtype ? y : np.astype(y, x.dtype);
    x.dispose();
    return b;
  },

  // jax-js's two devices in Node (WebGPU and WebGL need a browser), by name. An array made on a
  // named device is committed to it; from_numpy's are not (np.array without a device), as in JAX.
  devices() { return ["wasm", "cpu"]; },
  // jax-js's synchronous move (Array._putSync, private) reads the data and makes an array of it
  // on the other device: the same, spelt with the public API. Committed to `device`.
  to_device([b, device]) {
    const a = b.a;
    if (a.device === device) return box(a.ref);
    const d = { shape: [...a.shape], dtype: a.dtype, device };
    return box(a.size === 0 ? np.zeros(d.shape, d) : np.array(new TYPED[a.dtype](a.ref.dataSync()), d));
  },

  // Convolution and pooling in torch's layout, which is jax-js's too (N, C, H, W; O, C/G, kH, kW).
  conv2d([x, w, bias = null], { b = bias, stride = 1, padding = 0, dilation = 1, groups = 1 }) {
    const [ph, pw] = hw(padding);
    const y = jax.lax.convGeneralDilated(tensor(x), tensor(w), hw(stride), [[ph, ph], [pw, pw]],
      { rhsDilation: hw(dilation), featureGroupCount: int(groups) });
    return box(b === null ? y : np.add(y, np.reshape(tensor(b), [1, -1, 1, 1])));
  },
  max_pool2d([x, kernel, stride = null, padding = 0], kw) {
    return box(pool(tensor(x), kw.kernel_size ?? kernel, kw.stride ?? stride, kw.padding ?? padding, (win) => np.max(win), -Infinity));
  },
  avg_pool2d([x, kernel, stride = null, padding = 0], kw) {
    return box(pool(tensor(x), kw.kernel_size ?? kernel, kw.stride ?? stride, kw.padding ?? padding, (win) => np.mean(win), 0));
  },

  convert([b, kind]) {
    const a = b.a;
    if (kind === "len") {
      if (a.ndim === 0) throw new PyError("TypeError", "len() of unsized object");
      return a.shape[0];
    }
    if (kind === "bool") {
      if (a.size !== 1) throw new PyError("ValueError", a.size ? "The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()" : "The truth value of an empty array is ambiguous");
      const v = scalarOf(a);
      return typeof v === "boolean" ? v : v !== 0;  // Python: bool(nan) is True
    }
    if (kind === "item") {
      if (a.size !== 1) throw new PyError("ValueError", "can only convert an array of size 1 to a Python scalar");
      const v = scalarOf(a);
      return isFloat(a.dtype) ? new PyFloat(v) : v;
    }
    if (kind === "index") {
      if (a.ndim !== 0 || isFloat(a.dtype) || a.dtype === "bool") throw new PyError("TypeError", "only integer scalar arrays can be converted to a scalar index");
      return scalarOf(a);
    }
    if (a.ndim !== 0) throw new PyError("TypeError", "only 0-dimensional arrays can be converted to Python scalars");
    const v = Number(scalarOf(a));
    if (kind === "float") return new PyFloat(v);
    if (kind === "int") {
      if (Number.isNaN(v)) throw new PyError("ValueError", "cannot convert float NaN to integer");
      if (!Number.isFinite(v)) throw new PyError("OverflowError", "cannot convert float infinity to integer");
      return Math.trunc(v);
    }
    throw new PyError("ValueError", `no conversion ${kind}`);
  },

  // jax-js throws Error, TypeError and RangeError; its messages say which Python kind NumPy
  // raises for the same mistake. Wasm traps (integer division by zero) surface at a read.
  errorKind(e) {
    const m = String(e?.message ?? e);
    if (e instanceof WebAssembly.RuntimeError) {
      return /by zero/.test(m) ? "ZeroDivisionError" : /unrepresentable/.test(m) ? "OverflowError" : "RuntimeError";
    }
    if (/Allocation exceeds/.test(m)) return "MemoryError";
    if (/broadcast|Can't expand|at least [12]D|empty sequence|reshape|shapes not aligned|Cannot concatenate|Cannot stack|Cannot squeeze|transpose perm|perm for transpose|Duplicate axis|must have the same (shape|rank)|channels|kernel size|featureGroupCount/i.test(m)) return "ValueError";
    if (/out of bounds|Too many indices|Invalid shrink|Index .* out of/i.test(m)) return /^Axis/i.test(m) ? "ValueError" : "IndexError";
    if (e instanceof TypeError || /dtype|Unsupported/i.test(m)) return "TypeError";
    return "RuntimeError";
  },
};

serve(adapter);
