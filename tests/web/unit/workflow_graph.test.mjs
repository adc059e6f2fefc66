// Unit tests of the workflow graph's layout (web/js/pages/workflow_graph.js, node:test, no browser): which
// nodes and edges are handed to dagre (graphInput) and where dagre puts them (computeLayout). The distances
// follow from the drawing's constants: a node is 184 wide and 50 high (68 in a run), ranks are 46 apart,
// nodes 36, a label is 18 high and its text about 6.6 px a character (12 for CJK) plus 14; the drawing's box
// has a 10 px margin. Run by ctest (web_unit).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fakeBrowser } from './browser.mjs';

fakeBrowser();
const i18n = await import('../../../web/js/i18n.js');
const { graphInput, computeLayout } = await import('../../../web/js/pages/workflow_graph.js');
await i18n.setLanguage('en');

const node = (key, job_id = 1) => ({ key, job_id });
const edge = (from, to, condition) => (condition === undefined ? { from, to } : { from, to, condition });
const byKey = (laid) => Object.fromEntries(laid.nodes.map((n) => [n.key, n]));

test('the nodes drawn: those with a key, a repeated key once (its first node), in the order given', () => {
  const input = graphInput([node('a', 1), node('', 2), node('a', 3), node('b', 4)], [], 50);
  assert.deepEqual(input.nodes, [node('a', 1), node('b', 4)]);
  assert.equal(input.graph.hasNode('a') && input.graph.hasNode('b'), true);
  assert.deepEqual(input.graph.node('a'), { width: 184, height: 50 });
});

test('the edges drawn: between two drawn nodes, a pair once, no loop; an unknown condition is SUCCESS', () => {
  const input = graphInput([node('a'), node('b')], [
    edge('a', 'b', 'ALWAYS'),
    edge('a', 'b', 'FAILURE'), // the pair again
    edge('b', 'b'), // a loop
    edge('a', 'zz', 'SUCCESS'), // no such node
    edge('', 'a'),
    edge('b', 'a', 'WHATEVER'), // back: a cycle, drawn (the server refuses it and the form marks it)
  ], 50);
  assert.deepEqual(input.edges, [
    { from: 'a', to: 'b', condition: 'ALWAYS', label: 'always' },
    { from: 'b', to: 'a', condition: 'SUCCESS', label: '' },
  ]);
  assert.equal(input.graph.hasEdge('a', 'b'), true);
  assert.equal(input.graph.hasNode('zz'), false);
});

test('a label is written on an edge that is not SUCCESS, its box as wide as its text', async () => {
  const input = graphInput([node('a'), node('b'), node('c')], [edge('a', 'b', 'FAILURE'), edge('a', 'c', 'SUCCESS')], 50);
  // "on failure": 10 characters * 6.6 + 14.
  assert.deepEqual(input.graph.edge('a', 'b'), { width: 80, height: 18, labelpos: 'c' });
  assert.deepEqual(input.graph.edge('a', 'c'), {}, 'SUCCESS: no label');
  await i18n.setLanguage('zh-CN');
  try {
    const zh = graphInput([node('a'), node('b')], [edge('a', 'b', 'ALWAYS')], 50);
    assert.equal(zh.edges[0].label, '总是');
    assert.equal(zh.graph.edge('a', 'b').width, 2 * 12 + 14, 'CJK characters count double');
  } finally {
    await i18n.setLanguage('en');
  }
});

test('levels of a DAG: each rank 96 px below the one above (50 high + 46 between); a node with no edges on the first', () => {
  // a -> b, a -> c, b -> d, c -> d; e alone.
  const laid = computeLayout([node('a'), node('b'), node('c'), node('d'), node('e')],
    [edge('a', 'b'), edge('a', 'c'), edge('b', 'd'), edge('c', 'd')], 50);
  const n = byKey(laid);
  assert.deepEqual(['a', 'b', 'c', 'd', 'e'].map((k) => n[k].y), [25, 121, 121, 217, 25]);
  assert.equal(Math.abs(n.b.x - n.c.x), 184 + 36, 'siblings side by side, 36 px apart');
  assert.equal(n.a.x, (n.b.x + n.c.x) / 2, 'the parent above the middle of its children');
  assert.equal(n.d.x, n.a.x);
  assert.equal(Math.abs(n.e.x - n.a.x), 184 + 36, 'the lone node beside the first rank\'s other');
  for (const k of Object.keys(n)) assert.deepEqual([n[k].width, n[k].height], [184, 50], k);
  // Each edge leaves its parent's bottom and enters its child's top.
  assert.equal(laid.edges.length, 4);
  for (const e of laid.edges) {
    assert.equal(e.points[0].y, n[e.from].y + 25, `${e.from}>${e.to} starts at its parent`);
    assert.equal(e.points[e.points.length - 1].y, n[e.to].y - 25, `${e.from}>${e.to} ends at its child`);
  }
  // The box: x from the leftmost box's edge to the rightmost's (5 columns' worth: 0..514), y from 0 to 242.
  assert.deepEqual([laid.left, laid.top, laid.width, laid.height], [-10, -10, 514 + 20, 242 + 20]);
});

test('a label takes a rank of its own: its child 114 px below (50 + 23 + 18 + 23), the label half way', () => {
  const laid = computeLayout([node('a'), node('b')], [edge('a', 'b', 'FAILURE')], 50);
  const n = byKey(laid);
  assert.equal(n.b.y - n.a.y, 114);
  const [e] = laid.edges;
  assert.deepEqual([e.condition, e.label, e.width, e.x, e.y], ['FAILURE', 'on failure', 80, n.a.x, n.a.y + 25 + 23 + 9]);
});

test('a run\'s nodes are 68 high (key, job and state): ranks 114 px apart', () => {
  const n = byKey(computeLayout([node('a'), node('b')], [edge('a', 'b')], 68));
  assert.deepEqual([n.a.y, n.b.y, n.b.height], [34, 148, 68]);
});

test('a node alone: its box at the origin, the drawing 10 px larger on each side', () => {
  const laid = computeLayout([node('only', 7)], [], 50);
  assert.deepEqual(laid.nodes.map(({ key, job_id, x, y }) => ({ key, job_id, x, y })), [{ key: 'only', job_id: 7, x: 92, y: 25 }]);
  assert.deepEqual(laid.edges, []);
  assert.deepEqual([laid.left, laid.top, laid.width, laid.height], [-10, -10, 204, 70]);
});

test('a cycle is laid out too, the box holding every line and every label, even a label beside the nodes', () => {
  // a -> b -> c -> a: dagre turns one edge round and draws it beside the others, its label left of every node.
  const laid = computeLayout([node('a'), node('b'), node('c')], [edge('a', 'b'), edge('b', 'c'), edge('c', 'a', 'ALWAYS')], 50);
  assert.equal(laid.nodes.length, 3);
  assert.equal(laid.edges.length, 3);
  const inside = (x, y, what) => {
    assert.ok(x >= laid.left && x <= laid.left + laid.width, `${what}: x ${x} in the box`);
    assert.ok(y >= laid.top && y <= laid.top + laid.height, `${what}: y ${y} in the box`);
  };
  for (const e of laid.edges) {
    assert.ok(e.points.length >= 2, `${e.from}>${e.to} has a line`);
    for (const p of e.points) inside(p.x, p.y, `${e.from}>${e.to}`);
  }
  const back = laid.edges.find((e) => e.label);
  assert.equal(back.label, 'always');
  const labelLeft = back.x - back.width / 2;
  assert.ok(laid.nodes.every((n) => labelLeft < n.x - n.width / 2), 'the label is left of every node');
  inside(labelLeft, back.y - 9, 'the label\'s top left corner');
  inside(back.x + back.width / 2, back.y + 9, 'the label\'s bottom right corner');
  assert.equal(laid.left, Math.floor(labelLeft - 10), 'the box starts 10 px left of the label');
});
