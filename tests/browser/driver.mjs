// Drives Debian's chromium (headless, by playwright-core) on Warden's console
// for the Rust tests in tests/cli/mcp/console_browser.rs: one command per line
// on stdin, one answer per line on stdout (`ok ...` or `error ...`).
//
//   node driver.mjs LOGIN_URL
//   wait-question TEXT         a question card whose text holds TEXT: `ok ID MS`
//                              (MS: from this command to the card put on the page)
//   click ID LABEL             the button LABEL of question ID, once its card stopped moving
//   click-just-moved ID LABEL  the same on a card that moved just now: `ok <the status line>`
//   moved ID                   when question ID's card was made and last moved: `ok SHOWN MOVED` (ms)
//   gone ID                    waits until question ID is off the page
//   cancel TEXT                Cancel on the running call whose row holds TEXT
//   revoke TEXT                Revoke on the grant whose row holds TEXT
//   wait-grant TEXT            a grant row holding TEXT
//   audit FIELD VALUE          sets the audit filter FIELD; `ok <the table's text as JSON>`
//   card ID                    `ok <the card's text as JSON> <img elements in the page> <alerts seen>`
//   probe-alert                an alert raised by the test itself: `ok <alerts seen>` (the count counts)
//   screenshot PATH
//   quit
import { createRequire } from 'node:module';
import readline from 'node:readline';

const require = createRequire(new URL(`file://${process.env.WARDEN_BROWSER_TOOLS}/`));
const { chromium } = require('playwright-core');

const [loginUrl] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: process.env.WARDEN_CHROMIUM || '/usr/bin/chromium', args: ['--no-sandbox'] });
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
const alerts = [];
page.on('dialog', async (dialog) => { alerts.push(dialog.message()); await dialog.dismiss(); });
await page.goto(loginUrl);
await page.waitForSelector('#status:has-text("up to date")');
const say = (line) => process.stdout.write(`${line}\n`);
say('ready');

const card = (id) => page.locator(`[data-question-id="${id}"]`);
const commands = {
  async 'wait-question'(text) {
    const started = Date.now();
    const found = page.locator('.question', { hasText: text }).first();
    await found.waitFor({ state: 'visible', timeout: 30000 });
    // From this command (sent just before the call) to the card's making on the page.
    const shown = Number(await found.getAttribute('data-shown-at'));
    return `${await found.getAttribute('data-question-id')} ${shown - started}`;
  },
  async click(id, ...label) {
    // As a person aims: at a card that stays where it is.
    await page.waitForFunction((id) => {
      const node = document.querySelector(`[data-question-id="${id}"]`);
      return node && Date.now() - Number(node.dataset.movedAt || 0) > 700;
    }, id, { timeout: 30000 });
    await card(id).getByRole('button', { name: label.join(' '), exact: true }).click();
    return '';
  },
  async moved(id) {
    return `${await card(id).getAttribute('data-shown-at')} ${await card(id).getAttribute('data-moved-at')}`;
  },
  async 'click-just-moved'(id, ...label) {
    await card(id).evaluate((node) => { node.dataset.movedAt = String(Date.now()); });
    await card(id).getByRole('button', { name: label.join(' '), exact: true }).click();
    return JSON.stringify(await page.locator('#status').innerText());
  },
  async gone(id) {
    await card(id).waitFor({ state: 'detached', timeout: 30000 });
    return '';
  },
  async cancel(text) {
    await page.locator('#calls tbody tr', { hasText: text }).getByRole('button', { name: 'Cancel' }).click();
    return '';
  },
  async 'wait-grant'(text) {
    await page.locator('#grants tbody tr', { hasText: text }).first().waitFor({ timeout: 30000 });
    return '';
  },
  async revoke(text) {
    await page.locator('#grants tbody tr', { hasText: text }).getByRole('button', { name: 'Revoke' }).click();
    await page.locator('#grants tbody tr', { hasText: text }).waitFor({ state: 'detached', timeout: 30000 });
    return '';
  },
  async audit(field, ...value) {
    const input = page.locator(`#filters [name="${field}"]`);
    if (field === 'decision') await input.selectOption(value.join(' '));
    else await input.fill(value.join(' '));
    await page.waitForTimeout(600);
    return JSON.stringify(await page.locator('#audit tbody').innerText());
  },
  async card(id) {
    const text = await card(id).innerText();
    return `${JSON.stringify(text)} ${await page.locator('img').count()} ${alerts.length}`;
  },
  async 'probe-alert'() {
    await page.evaluate(() => alert('probe'));
    return String(alerts.length);
  },
  async screenshot(path) {
    await page.screenshot({ path, fullPage: false });
    return '';
  },
};

const lines = readline.createInterface({ input: process.stdin });
for await (const line of lines) {
  const [name, ...args] = line.trim().split(' ');
  if (name === 'quit') break;
  try {
    if (!commands[name]) throw new Error(`unknown command ${name}`);
    say(`ok ${await commands[name](...args)}`.trimEnd());
  } catch (e) {
    say(`error ${String(e.message).split('\n')[0]}`);
  }
}
await browser.close();
