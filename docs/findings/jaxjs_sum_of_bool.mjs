// jax-js: `sum` and `prod` of a boolean array are boolean, so a sum of booleans cannot count,
// and a boolean array with a number becomes uint32.
//
// NumPy: `sum(bool [True, True, False])` is 2 (int64; int32 under jax-js's declared default
// int, as JAX gives), `prod` of bools is an int too, `cumulative_sum` of bools is int, and
// `bool [True, False] + 1` is int `[2, 1]`. jax-js 0.1.25 keeps `sum` and `prod` in bool
// (`sum([True, True, False])` is True, `sum` of each row of [[T, T], [T, F]] is [True, True]),
// gives `cumulative_sum` of bools as uint32, and promotes a bool array with a number (or
// `abs`, `round` of one) to uint32.
//
// Breaks LZ-NUM-010 (reductions match the oracle in value and dtype), LZ-NUM-016 (cumulative
// sums), LZ-NUM-003 (a bool array with a weak int).
// Seen on @jax-js/jax 0.1.25, Wasm backend, Node 20. Prints jax-js's and NumPy's values;
// exits 1 while the bug is there, 0 once fixed.
if (typeof globalThis.Float16Array === "undefined") {
  globalThis.Float16Array = class Float16Array { constructor() { throw new Error("no float16 in Node 20"); } };
}
const jax = await import(new URL("../../src/minilazy/conformance/adapters/js/node_modules/@jax-js/jax/dist/index.js", import.meta.url).href);
const np = jax.numpy;

const bools = (v, shape) => np.array(new Int32Array(v), { shape, dtype: np.bool });
const cases = [
  ["sum(bool [True, True, False])", () => np.sum(bools([1, 1, 0], [3])), "int32", [2]],
  ["sum(bool [[T, T], [T, F]], axis=1)", () => np.sum(bools([1, 1, 1, 0], [2, 2]), 1), "int32", [2, 1]],
  ["prod(bool [True, True])", () => np.prod(bools([1, 1], [2])), "int32", [1]],
  ["cumulative_sum(bool [True, True, False])", () => np.cumulativeSum(bools([1, 1, 0], [3])), "int32", [1, 2, 2]],
  ["bool [True, False] + 1", () => np.add(bools([1, 0], [2]), 1), "int32", [2, 1]],
];
let bug = false;
for (const [what, f, dtype, want] of cases) {
  const y = f();
  const got = Array.from(y.dataSync(), Number);
  const wrong = y.dtype !== dtype || JSON.stringify(got) !== JSON.stringify(want);
  bug ||= wrong;
  console.log(`${what}: jax-js ${y.dtype} ${JSON.stringify(got)}; NumPy ${dtype} ${JSON.stringify(want)}${wrong ? "   <-- wrong" : ""}`);
}
console.log(bug ? "BUG PRESENT" : "fixed");
process.exit(bug ? 1 : 0);
