// `npm test` runs every project: protocol/unit/page tests and the real-browser e2e tests.
const transform = {
  '^.+\\.[tj]s$': ['ts-jest', { tsconfig: 'tsconfig.test.json', diagnostics: false }],
};
// jose, openid-client, oauth4webapi and otplib's @scure/@noble dependencies ship ESM only: transpile them for jest's CommonJS runtime.
const transformIgnorePatterns = ['/node_modules/(?!(jose|openid-client|oauth4webapi|otplib|@otplib|@scure|@noble)/)'];

module.exports = {
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  projects: [
    {
      displayName: 'api',
      testEnvironment: 'node',
      roots: ['<rootDir>/test'],
      testMatch: ['**/*.test.ts'],
      transform,
      transformIgnorePatterns,
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      roots: ['<rootDir>/e2e'],
      testMatch: ['**/*.e2e.ts'],
      transform,
      transformIgnorePatterns,
    },
  ],
  testTimeout: 30000,
  // With one worker (a 2-core machine), jest runs every file inside its main process, which holds
  // whatever a file leaves reachable (a timer, a socket) until the run ends. A worker over this
  // heap after a file is replaced instead, so a future leak slows the run rather than ending it.
  workerIdleMemoryLimit: '2GB',
};
