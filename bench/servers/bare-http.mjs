// Ceiling: a bare node:http server answering a small JSON body to every request.
// Started as a child process by bench/ceilings.ts; prints "LISTENING <port>" once bound.
import http from 'node:http';

const body = Buffer.from('{"ok":true}');
const server = http.createServer((req, res) => {
  // Drain the request body (POST rows send a small form) before answering.
  req.on('data', () => {});
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
    res.end(body);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT || 0), '127.0.0.1', () => {
  console.log(`LISTENING ${server.address().port}`);
});
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.on('disconnect', () => process.exit(0)); // parent gone
