import { startPeer } from './peer';
import autocannon from 'autocannon';
(async () => {
  const t = await startPeer();
  const spec = t.rows.code as any;
  for (const N of [200, 3000]) {
  const codes: string[] = await spec.mint(N);
  let next = 0; const sent: string[] = []; const bad: any[] = [];
  await new Promise((res) => autocannon({ url: t.base, connections: 32, amount: N - 40, requests: [{ method: 'POST', path: spec.path, headers: spec.headers,
    setupRequest: (q: any) => { const c = codes[next++]; sent.push(c); return { ...q, body: spec.body(c) }; },
    onResponse: (s: number, b: string) => { if (s !== 200 && bad.length < 3) bad.push([s, b.slice(0, 100)]); } }] }, (e: any, r: any) => { console.log(N, e, r.requests.total, r.non2xx, 'next', next, 'unique sent', new Set(sent).size, bad); res(null); }));
  }
  await t.stop();
})();
