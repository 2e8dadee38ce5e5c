// A fresh embedded database served on its socket, in a process of its own: PGlite cannot start
// inside jest's module sandbox. Prints "ready" once serving; SIGTERM, or the parent going away
// (its end of stdin closes), stops it.
import { startEmbeddedServer } from '../../src/db/embedded';

async function main() {
  const server = await startEmbeddedServer(process.argv[2], 32);
  process.stdout.write('ready\n');
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    void server.stop().finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.stdin.on('end', stop).resume();
}

void main();
