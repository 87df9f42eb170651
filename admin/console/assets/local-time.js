// Gatehouse console: shows every <time datetime="…"> in the viewer's locale and time zone. The
// server renders UTC and puts it in `title` too, so hovering shows the UTC time.
(function () {
  'use strict';
  const format = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

  function localizeTimes(root) {
    for (const element of root.querySelectorAll('time[datetime]')) {
      const date = new Date(element.getAttribute('datetime'));
      if (!Number.isNaN(date.getTime())) element.textContent = format.format(date);
    }
  }

  localizeTimes(document);
  window.gatehouse.localizeTimes = localizeTimes;
})();
