@echo off
rem Drag a .pmx model onto this file (a .vmd motion with it, if you like: select both, drag them together).
rem plush lists the model's materials, asks for the number of the one to make soft, and writes the result
rem into a folder beside the model, named after it.
chcp 65001 >nul
setlocal
set "MODEL="
set "MOTION="
for %%F in (%*) do (
  if /i "%%~xF"==".pmx" set "MODEL=%%~fF"
  if /i "%%~xF"==".vmd" set "MOTION=%%~fF"
)
if not defined MODEL (
  echo Drag a .pmx model onto plush-drop.bat, with a .vmd motion if you like.
  pause
  exit /b 2
)
"%~dp0plush.exe" info "%MODEL%"
echo.
set "CAGE="
set /p CAGE=Number of the material to make soft (from the list above): 
for %%M in ("%MODEL%") do set "OUT=%%~dpnM_plush"
if defined MOTION (
  "%~dp0plush.exe" run "%MODEL%" --cage "%CAGE%" --motion "%MOTION%" -o "%OUT%"
) else (
  "%~dp0plush.exe" run "%MODEL%" --cage "%CAGE%" -o "%OUT%"
)
echo.
if errorlevel 1 (echo plush stopped: see the message above.) else (echo Done: the files are in "%OUT%".)
pause
