/**
 * The settings every test gateway starts with unless a test sets them: rate limits off (a test
 * that checks them turns them on) and no log output. Environment variables as loadConfig reads them.
 */
export const TEST_ENV: Readonly<Record<string, string>> = {
  RATE_LIMIT_GENERAL: '0',
  RATE_LIMIT_AUTH: '0',
  RATE_LIMIT_TOKEN: '0',
  LOG_LEVEL: 'silent',
};
