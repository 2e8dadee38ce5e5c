import fs from 'node:fs';
import path from 'node:path';

/**
 * The release, from package.json beside src/ or dist/ (the image copies it too): /healthz and
 * the start-up line report it, so an operator can tell which build answers.
 */
export const VERSION: string = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')).version;
